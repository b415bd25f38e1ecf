"""The templates some environments list among their actions ("move OBJ to OBJ" in ScienceWorld,
"take {o}" in TextWorld): a listed action with object slots is a pattern, never an action to send.
What the agent's choice of action reads an admissible list with (`rbdspy.agent.action_choice`)."""

from __future__ import annotations

import re
from functools import lru_cache

from rbdspy.core.words import words_of as _words

ARTICLES = frozenset({"a", "an", "the"})
_PLACEHOLDER = re.compile(r"OBJ\d*|\{[^{}\s]*\}|<[^<>\s]*>")
_OBJECT_WORDS = r"\S+(?: \S+)*?"


@lru_cache(maxsize=8192)
def words_of(text: str) -> tuple[str, ...]:
    """`text` as lower-case words without articles ("Take the fly-larva." -> ("take", "flylarva"));
    cached, as the same list is read at every step."""
    return tuple(w for w in _words(text) if w not in ARTICLES)


def is_template(action: str) -> bool:
    """Whether a listed action is a pattern with object slots ("move OBJ to OBJ", "take {o}")."""
    return any(_PLACEHOLDER.fullmatch(token) for token in action.split())


@lru_cache(maxsize=256)
def _template_pattern(template: str) -> re.Pattern:
    parts = []
    for token in template.split():
        if _PLACEHOLDER.fullmatch(token):
            parts.append(_OBJECT_WORDS)
        else:
            parts.extend(re.escape(word) for word in words_of(token))
    return re.compile(" ".join(parts))


def fits_template(text: str, template: str) -> bool:
    """Whether `text` is `template` with every slot filled by at least one word
    ("move the pot to the stove" fits "move OBJ to OBJ"; "move pot" does not)."""
    return _template_pattern(template).fullmatch(" ".join(words_of(text))) is not None


def fits_a_template(text: str, listed: list[str] | tuple[str, ...]) -> bool:
    """Whether `text` fills one of the templates in `listed`."""
    return any(fits_template(text, t) for t in listed if is_template(t))
