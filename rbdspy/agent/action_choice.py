"""Which admissible action an LM meant: its answer written the way the environment understands it.

    choose_admissible("take fly larva from formless_safe", ["go to kitchen", "take fly larva from formless safe"])
    # 'take fly larva from formless safe'

A small LM respells one action again and again ("formless_safe", "formless-safe", "book shelf"
for "bookshelf", "the bookshelf") and the environment refuses every spelling, so a spelling
mistake costs a step each time. Here the answer is matched to the listed actions, in this order:

1. the same action written differently: case, punctuation, "_" and "-", spaces inside a name,
   and the articles "a", "an", "the" aside;
2. the number of an option, when the environment asked which object was meant and listed the
   numbers ("1: the orange" -> "1");
3. an answer that fills a template in the list ("focus on OBJ", "move OBJ to OBJ") is kept as
   written: a template is a pattern, never an action to send;
4. the nearest listed action with the same verb that is the same action: the words the two do not
   share are one name spelt two ways ("book shoe" / "bookshelf", "workben" / "workbench"), or, when
   the list is all the world understands, one of them only adds a detail to what both name
   ("take bug" / "take bug from plate"). Nearest by the characters in common; ties go to the action
   listed first.

Anything else is sent as written, and the environment's own refusal tells the agent: a different
verb is a different action ("take X" is not "examine X", "close" is not "open"), and another name
is another thing ("take cat" is not "take hat", a latchkey is not a safe). A list that carries
templates (ScienceWorld's) holds only some of what the world understands, so there an unlisted
answer may be valid as it is: only respellings are replaced, never an answer that names less or
more than a listed action.
"""

from __future__ import annotations

import copy
from difflib import SequenceMatcher
from typing import Any, Literal

from rbdspy.envs.action_templates import fits_template, is_template, words_of

# Two spellings of one name share more than this share of their characters (SequenceMatcher's
# ratio): a typo, a plural or a cut word does; two names one letter apart ("cat"/"hat",
# "stove"/"store") do not.
SAME_NAME = 0.8
# A detail added or left out counts only where the words both share name more than the verb.
MIN_SHARED_WORDS = 2


def choose_admissible(text: str, admissible: list[str]) -> str:
    """The listed action `text` means (see the module's docstring), or `text` itself when it
    means none: an empty answer, an empty list, a list of templates alone, an answer that fits a
    template, or one that no listed action is a respelling of."""
    text = (text or "").strip()
    if not text or not admissible:
        return text
    concrete = [a for a in admissible if a.strip() and not is_template(a)]
    templates = [a for a in admissible if is_template(a)]
    return (
        _written_differently(text, concrete)
        or _option_number(text, concrete)
        or (text if any(fits_template(text, t) for t in templates) else None)
        or _nearest_same_action(text, concrete, exhaustive=not templates)
        or text
    )


def _written_differently(text: str, concrete: list[str]) -> str | None:
    """The first listed action that is `text` as written ignoring case, else the first with the
    same words, else the first with the same letters once spaces are gone ("book shelf")."""
    lowered, said = text.lower(), words_of(text)
    joined = "".join(said)
    for same in (
        lambda a: a.lower() == lowered,
        lambda a: words_of(a) == said,
        lambda a: bool(joined) and "".join(words_of(a)) == joined,
    ):
        found = next((a for a in concrete if same(a)), None)
        if found is not None:
            return found
    return None


def _option_number(text: str, concrete: list[str]) -> str | None:
    """The listed number an answer starts with, when the list holds numbers (the environment's
    question "which did you mean?"): "1: the orange" -> "1"."""
    said = words_of(text)
    if said and said[0].isdigit() and said[0] in concrete:
        return said[0]
    return None


def _nearest_same_action(text: str, concrete: list[str], *, exhaustive: bool) -> str | None:
    said = words_of(text)
    if not said or said[0].isdigit():  # a number answers a question exactly or not at all
        return None
    best, best_score = None, -1.0
    for action in concrete:
        listed = words_of(action)
        if not listed or listed[0] != said[0] or not _same_action(said, listed, exhaustive):
            continue
        score = _similarity("".join(said), "".join(listed))
        if score > best_score:  # strictly: a tie keeps the action listed first
            best, best_score = action, score
    return best


def _same_action(said: tuple[str, ...], listed: tuple[str, ...], exhaustive: bool) -> bool:
    """Whether the words `said` and `listed` do not share are one name spelt two ways, or (in an
    exhaustive list) a detail one of them adds to a shared action that names more than its verb."""
    ours, theirs, shared = _differing_words(said, listed)
    if ours and theirs:
        return _similarity("".join(ours), "".join(theirs)) > SAME_NAME
    return exhaustive and shared >= MIN_SHARED_WORDS


def _differing_words(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...], int]:
    """The words of `a` and of `b` between their common first and common last words, and how
    many words they share at either end."""
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    return a[start : len(a) - end], b[start : len(b) - end], start + end


def _similarity(a: str, b: str) -> float:
    return SequenceMatcher(None, a, b, autojunk=False).ratio()


def choice_among(predictor: Any, options: list[str], field: str = "action") -> Any | None:
    """A copy of `predictor` whose `field` must be one of `options` (the listed actions that are
    not templates): a `Literal` output, which an LM that takes a JSON schema (the embedded engine,
    most hosted ones) decodes under that constraint, so the answer is a listed action. None when
    no option is left. The copy keeps the predictor's instructions and demos."""
    concrete = list(dict.fromkeys(a for a in options if a.strip() and not is_template(a)))
    if not concrete:
        return None
    chooser = copy.deepcopy(predictor)
    for _, predict in chooser.named_predictors():
        predict.signature = predict.signature.with_updated_fields(field, type_=Literal[tuple(concrete)])
    return chooser
