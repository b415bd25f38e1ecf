"""Is what a lesson says about a persistent world true? Checked against the world's own facts.

On a world that persists, facts (where things are, how rooms connect, which key opens what) are
the content that carries over, and a wrong fact is worse than none. A lesson's text is split into
sentences; a sentence that names entities of the world in one of these relations is a claim:

- where a thing is: a portable object or a piece of furniture and a room ("the berry is in the
  canteen"), or an object and the supporter or container holding it ("the key is in the box");
- how rooms connect: two rooms and a direction ("the canteen is north of the studio", "from the
  studio go north to the canteen");
- which key opens what: a key and a container or door with "open"/"unlock".

Sentences naming no such pair are not claims (strategies, guardrails), and a lesson with no claim
is unchecked rather than true. Names are matched whole-word and longest first, so "cake scented
passkey" is not read as "passkey".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rbdspy.envs.textworld_facts import HouseFacts

DIRECTION_WORDS = ("north", "south", "east", "west")
_SENTENCES = re.compile(r"[.;!?\n]+")
_OF_FORM = re.compile(r"\b(north|south|east|west)\s+of\b")
_GO_FORM = re.compile(r"\b(?:go|head|move|walk)\s+(north|south|east|west)\b")


@dataclass(frozen=True)
class Claim:
    """One checkable statement of a lesson and whether the world agrees."""

    kind: str  # "place", "route" or "key"
    text: str
    true: bool


def _mentions(sentence: str, names: list[str]) -> list[tuple[int, str]]:
    """The names a sentence mentions, longest first so a longer name hides the ones inside it."""
    found: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []
    for name in sorted(names, key=len, reverse=True):
        for match in re.finditer(rf"\b{re.escape(name.lower())}\b", sentence):
            span = match.span()
            if not any(a < span[1] and span[0] < b for a, b in taken):
                taken.append(span)
                found.append((span[0], name))
    return sorted(found)


def _route(sentence: str, rooms: list[str], facts: HouseFacts) -> bool | None:
    """A route claim between two rooms: "A is D of B" or "from A go D to B" (else None)."""
    if len(rooms) != 2:
        return None
    first, second = rooms
    of = _OF_FORM.search(sentence)
    if of:  # first is D of second: from second, go D to reach first
        return (of.group(1), first) in {(d, to) for d, to, _ in facts.exits.get(second, [])}
    go = _GO_FORM.search(sentence)
    if go:  # from first, go D to second
        return (go.group(1), second) in {(d, to) for d, to, _ in facts.exits.get(first, [])}
    return None


def claims(text: str, facts: HouseFacts) -> list[Claim]:
    """Every claim `text` makes about the world of `facts`, each with its truth."""
    kind_of = facts.kind
    things = [t for t in facts.room_of]
    doors_and_locks = [*facts.key_for, *facts.key_for.values(), *facts.state]
    names = list(dict.fromkeys([*facts.rooms, *things, *doors_and_locks]))
    out: list[Claim] = []
    for raw in _SENTENCES.split(text or ""):
        sentence = " ".join(raw.lower().split())
        if not sentence:
            continue
        mentioned = [name for _, name in _mentions(sentence, names)]
        rooms = [m for m in mentioned if m in facts.rooms]
        objects = [m for m in mentioned if m not in facts.rooms]
        route = _route(sentence, rooms, facts) if any(w in sentence for w in DIRECTION_WORDS) else None
        if route is not None:
            out.append(Claim("route", sentence, route))
            continue
        keys = [m for m in objects if kind_of.get(m) == "k"]
        locks = [m for m in objects if m in facts.key_for or kind_of.get(m) in ("c", "d")]
        if keys and locks and re.search(r"\b(open|opens|unlock|unlocks)\b", sentence):
            key, target = keys[0], next(t for t in locks if t != keys[0])
            out.append(Claim("key", sentence, facts.key_for.get(target) == key))
            continue
        holders = [m for m in objects if kind_of.get(m) in ("s", "c") and m not in facts.place]
        portable = [m for m in objects if m in facts.place]
        if len(portable) == 1 and len(holders) == 1 and re.search(r"\b(on|in|inside)\b", sentence):
            out.append(Claim("place", sentence, facts.place[portable[0]][1] == holders[0]))
        elif len(objects) == 1 and len(rooms) == 1:
            out.append(Claim("place", sentence, facts.room_of.get(objects[0]) == rooms[0]))
    return out


def lesson_truth(text: str, facts: HouseFacts) -> dict[str, int]:
    """A lesson's claims counted: how many, how many true (0 and 0 for a lesson with none)."""
    found = claims(text, facts)
    return {"claims": len(found), "true": sum(c.true for c in found)}
