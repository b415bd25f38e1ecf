"""What changes between two tasks of one kind, and a past task's things said for this one.

Two tasks of a kind are worded alike and differ where they name other things ("boil water" /
"boil chocolate"; "move it to the red box in the kitchen" / "... the green box in the bedroom").
Aligning their words (difflib, as a diff aligns lines) says which words of the past task became
which of this one; a thing the past task named is this task's thing where its words fell in the
changed part ("red box" -> "green box"), the same thing where they fell in the part both share.
A name that straddles an insertion or a deletion cannot be said for this task: None, and the map
offers nothing for it.
"""

from __future__ import annotations

from difflib import SequenceMatcher
from functools import lru_cache

from rbdspy.core.words import says, words_of


@lru_cache(maxsize=4096)
def _opcodes(past: tuple[str, ...], now: tuple[str, ...]) -> tuple[tuple[str, int, int, int, int], ...]:
    return tuple(SequenceMatcher(a=past, b=now, autojunk=False).get_opcodes())


def _span(words: tuple[str, ...], name: tuple[str, ...]) -> tuple[int, int] | None:
    """Where `name`'s words stand one after another in `words` (the last such place: a task
    names where to bring a thing after it names the thing), or None."""
    span = len(name)
    found = [i for i in range(len(words) - span + 1) if words[i : i + span] == name]
    return (found[-1], found[-1] + span) if span and found else None


def said_for(name: str, past_task: str, task: str) -> str | None:
    """`name`, said in `past_task`, as `task` says it: the same words where both tasks share
    them, this task's words where the past task's were replaced, None where the name's words are
    not one span of the past task or fall across a part only one task has."""
    past, now = words_of(past_task), words_of(task)
    span = _span(past, words_of(name))
    if span is None:
        return None
    start, end = span
    out: list[str] = []
    for tag, i1, i2, j1, j2 in _opcodes(past, now):
        lo, hi = max(i1, start), min(i2, end)
        if lo >= hi:
            continue
        if tag == "equal":
            out.extend(now[j1 + (lo - i1) : j1 + (hi - i1)])
        elif tag == "replace" and lo == i1 and hi == i2:
            out.extend(now[j1:j2])
        else:  # part of a replaced run, or words this task does not have
            return None
    return " ".join(out) or None


def said_in(task: str, name: str) -> bool:
    """Whether `task` says `name` (its content words one after another)."""
    return says(task, name)


def transfers(procedure, task: str) -> bool:
    """Whether `procedure`'s task differs from `task` only where the procedure's slots hold the
    task's words (its things and places named by the task): then what it did is done again with
    this task's things. A word changed that no slot holds ("renewable" for "nonrenewable",
    "shallowest" for "steepest") may change what is done."""
    past, now = words_of(procedure.task), words_of(task)
    held: set[int] = set()
    for step in procedure.steps:
        named = [a for a, slot in zip(step.act.args, step.slots, strict=True) if slot == "task"]
        named += [step.place] if step.place_named and step.place else []
        for name in named:
            span = _span(past, words_of(name))
            if span is not None:
                held |= set(range(*span))
    for tag, i1, i2, _j1, _j2 in _opcodes(past, now):
        if tag != "equal" and (i1 == i2 or not set(range(i1, i2)) <= held):
            return False
    return True
