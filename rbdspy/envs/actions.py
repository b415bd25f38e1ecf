"""Typed actions: an action as the environment's template and the things in its slots.

Why: a map that compares actions as strings ends up re-forming them ("open kitchen door" against
"open door to kitchen", "orange in inventory" against "orange"), and each such rule fits one game.
Each adapter parses its own actions into an `Act` (its template, with `{}` for every slot, and the
canonical names of the things in the slots) and renders them back, so the map and the agent
compare and fill typed actions and never re-form text.

    grammar = TemplateGrammar({"take {}": "take {}", "put {} on {}": "put {} on {}"})
    act = grammar.parse("put the mug on the table")    # Act(template="put {} on {}", args=("mug", "table"))
    grammar.render(act)                                  # "put mug on table"

`Act.on_way` says the action is done to a way between places (a door), not to a thing: the map
keeps such an action as what a move needs first, not as a step of a task. Only the adapter can
tell (a ScienceWorld door, a TextWorld `{d}` slot).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Protocol, runtime_checkable

from rbdspy.core.words import words_of
from rbdspy.types import Act

SLOT = "{}"


def fill(template: str, args: Sequence[str]) -> str:
    """`template` with its slots filled by `args`, in order."""
    parts = template.split(SLOT)
    out = parts[0]
    for arg, part in zip(args, parts[1:], strict=False):
        out += arg + part
    return out


__all__ = ["SLOT", "Act", "TemplateGrammar", "TypedActions", "fill", "find_listed", "same_act", "same_thing"]


# Words after which a name goes on to describe the thing further (what it holds, where it is or leads):
# "flower pot 7 containing apple tree and soil" is flower pot 7, a "door to kitchen" a door.
DESCRIBING = frozenset({"containing", "in", "on", "with", "holding", "to"})


def same_thing(a: str, b: str) -> bool:
    """Whether two canonical names name the same thing: equal (case aside), or one is the other
    with words in front of it ("adult apple tree", "apple tree": English says what qualifies a
    thing before the thing), or with words describing it further after a describing word ("flower
    pot 7 containing soil"). An "apple" is no "apple tree", and a "blue jay" no "blue jay egg"
    (a thing renamed as it changed is followed by the map, not guessed from its words)."""
    left, right = words_of(a), words_of(b)
    if not left or not right:
        return False
    if left == right:
        return True
    short, long = (left, right) if len(left) < len(right) else (right, left)
    if long[-len(short) :] == short:
        return True
    return long[: len(short)] == short and long[len(short)] in DESCRIBING


def same_act(a: Act | None, b: Act | None) -> bool:
    """Whether two acts are the same action: one template, and the same things in its slots
    (exactly, or by `same_thing`)."""
    if a is None or b is None or a.template != b.template or len(a.args) != len(b.args):
        return False
    return all(same_thing(x, y) for x, y in zip(a.args, b.args, strict=True))


def find_listed(act: Act, listed: Iterable[tuple[Act | None, str]]) -> str | None:
    """The listed action (`(typed, text)` pairs) that is `act`: the one with exactly its things
    first, else the only one that is the same action by `same_act`; None otherwise."""
    listed = [(typed, text) for typed, text in listed if typed is not None]
    exact = next((text for typed, text in listed if typed.key == act.key), None)
    if exact is not None:
        return exact
    alike = [text for typed, text in listed if same_act(typed, act)]
    return alike[0] if len(alike) == 1 else None


@runtime_checkable
class TypedActions(Protocol):
    """An environment that parses its actions into `Act`s and renders them back."""

    def parse_action(self, text: str) -> Act | None: ...

    def render_action(self, act: Act) -> str: ...


@lru_cache(maxsize=512)
def _compiled(form: str) -> re.Pattern:
    """A form as a pattern: its words literally, each slot one or more words, spaces as any."""
    tokens = [r"(.+?)" if token == SLOT else re.escape(token) for token in form.split()]
    return re.compile("^" + r"\s+".join(tokens) + "$", re.IGNORECASE)


def _plain(text: str) -> str:
    """A slot's text as a name: spaces collapsed, without a leading article."""
    words = text.split()
    while words and words[0].lower() in ("the", "a", "an"):
        words = words[1:]
    return " ".join(words)


class TemplateGrammar:
    """Parses and renders actions by templates: `forms` maps each way an action may be written
    (`"go to {}"`) to the template it is (`"go {}"`), `writes` each template to how it is written
    back (default: its first form). `thing` turns a slot's text into the thing's canonical name
    (an adapter's naming conventions); `way` says whether a template with these things is done to
    a way between places. Forms are tried longest first, so "pick up {}" wins over "pick {}"."""

    def __init__(
        self,
        forms: Mapping[str, str],
        writes: Mapping[str, str] | None = None,
        thing: Callable[[str], str] | None = None,
        way: Callable[[str, tuple[str, ...]], bool] | None = None,
    ):
        if not forms:
            raise ValueError("a TemplateGrammar needs at least one form")
        self.forms = dict(forms)
        written: dict[str, str] = {}
        for form, template in self.forms.items():
            written.setdefault(template, form)
        self.writes = {**written, **(writes or {})}
        self.thing = thing or _plain
        self.way = way
        # Literal words first, longest first: the most specific form matches first.
        self._order = sorted(self.forms, key=lambda f: (-len(f.replace(SLOT, "").split()), -len(f)))

    def parse(self, text: str) -> Act | None:
        """The act `text` writes, or None where no form fits."""
        spoken = " ".join(str(text or "").split())
        if not spoken:
            return None
        for form in self._order:
            match = _compiled(form).match(spoken)
            if match is None:
                continue
            args = tuple(self.thing(group) for group in match.groups())
            if any(not arg for arg in args):
                continue
            template = self.forms[form]
            return Act(template=template, args=args, on_way=bool(self.way and self.way(template, args)))
        return None

    def render(self, act: Act) -> str:
        """`act` as this environment writes it (its things by their canonical names)."""
        return fill(self.writes.get(act.template, act.template), act.args)
