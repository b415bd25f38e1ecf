"""Names compared by their words: how a map matches what a task, an action or an inventory says
to the places and things an environment named, whatever game's grammar wrote them."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

_WORD = re.compile(r"[a-z0-9]+")
_HYPHEN = re.compile(r"(?<=[A-Za-z0-9])-(?=[A-Za-z0-9])")
# English function words: two names that differ only in these name the same thing.
FUNCTION_WORDS = frozenset(
    {"a", "an", "the", "to", "of", "in", "on", "into", "onto", "at", "from", "with", "and", "or", "for", "it", "its"}
)


def _content_words(text: str) -> list[str]:
    """The content words of `text` in the order it says them: lower case, punctuation, underscores
    and hyphens as spaces, function words left out."""
    return [w for w in _WORD.findall((text or "").lower().replace("_", " ")) if w not in FUNCTION_WORDS]


def words(text: str) -> frozenset[str]:
    """The content words of `text`, as a set."""
    return frozenset(_content_words(text))


def names(text: str, name: str) -> bool:
    """Whether `text` names `name`: every content word of the name is in the text."""
    wanted = words(name)
    return bool(wanted) and wanted <= words(text)


def short_name(name: str) -> str:
    """A thing's name without the description some environments add in parentheses ("flower pot
    7 (containing a pea plant in the seedling stage, soil)"), which changes as the thing does."""
    return name.split(" (")[0]


def gained(before: Iterable[str], after: Iterable[str]) -> list[str]:
    """What `after` holds that `before` did not, a thing whose description alone changed (a pot
    whose plant grew) being the same thing; a second thing of one name ("book (moby dick)" beside
    "book (dracula)") is a new one."""
    before, after = list(before), list(after)
    left = Counter(short_name(t) for t in before)
    new = []
    for thing in sorted(after, key=lambda t: t not in before):  # the names held before first
        if left[short_name(thing)]:
            left[short_name(thing)] -= 1
        else:
            new.append(thing)
    return new


def task_names(task: str, name: str) -> bool:
    """Whether `task` says `name`: its content words one after another, in order (function words
    between them aside: "the box of chocolates"), a word joined by a hyphen being one word. Words
    of a name scattered over a task do not name it: "find an animal ... focus on the thing ... in
    the living room" names no "living thing", and a "non-living thing" is not one either."""
    said, wanted = _content_words(_HYPHEN.sub("", task)), _content_words(_HYPHEN.sub("", name))
    span = len(wanted)
    return span > 0 and any(said[i : i + span] == wanted for i in range(len(said) - span + 1))


def same_action(a: str, b: str) -> bool:
    """Whether two actions say the same thing ("open door to kitchen", "open kitchen door")."""
    return a.strip().lower() == b.strip().lower() or (bool(words(a)) and words(a) == words(b))


def admissible_form(action: str, admissible: Iterable[str]) -> str | None:
    """`action` as the admissible list writes it, or None when the list does not hold it. A list
    may shorten an action where it is unambiguous ("open door" in a room with one door): the one
    listed action with the same first word whose words are all among the action's counts too."""
    listed = list(admissible)
    lowered = action.strip().lower()
    exact = next((a for a in listed if a.strip().lower() == lowered), None)
    if exact is not None:
        return exact
    same = next((a for a in listed if same_action(a, action)), None)
    if same is not None:
        return same
    verb = lowered.split()[0] if lowered.split() else ""
    wanted = words(action)
    shorter = [a for a in listed if a.lower().split()[:1] == [verb] and len(words(a)) >= 2 and words(a) < wanted]
    return shorter[0] if len(shorter) == 1 else None


def grown(name: str, base: str) -> bool:
    """Whether `name` is `base` with words in front of it ("adult apple tree", "apple tree"):
    English says what qualifies a thing before the thing, so it is one of those. An "apple tree"
    is no "apple"."""
    said, wanted = _content_words(name), _content_words(base)
    return len(said) > len(wanted) > 0 and said[-len(wanted) :] == wanted


def located_form(action: str, admissible: Iterable[str]) -> str | None:
    """`action` as a list writes it where it says where the thing is: two things of one name in
    view ("focus on orange in bowl", "focus on orange in inventory", where "focus on orange" is
    not listed). The one in hand first: it goes wherever the agent goes."""
    lowered = action.strip().lower()
    located = [a for a in admissible if a.strip().lower().startswith(lowered + " in ")]
    return next((a for a in located if a.strip().lower().endswith(" in inventory")), located[0] if located else None)


def similarity(a: str, b: str) -> float:
    """The share of content words two texts have in common (Jaccard)."""
    left, right = words(a), words(b)
    return len(left & right) / len(left | right) if left | right else 0.0
