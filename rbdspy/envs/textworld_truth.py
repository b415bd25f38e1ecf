"""Is what a lesson says about a persistent world true? Checked against the world's own facts.

On a world that persists, facts (where things are, how rooms connect, which key opens what) are
the content that carries over, and a wrong fact is worse than none. A lesson's text is split into
sentences; a sentence that names entities of the world in one of these relations is a claim:

- where a thing is: a portable object or a piece of furniture and a room ("the berry is in the
  canteen"), or an object and the supporter or container holding it ("the key is in the box");
- how rooms connect: two rooms and a direction ("the canteen is north of the studio", "from the
  studio go north to the canteen");
- which key opens what: a key and a container or door with "open"/"unlock".

Where a thing is must be stated ("the berry is in the canteen", "in the canteen there is a
berry"): a task quoted or an action told ("put the berry in the box", "the agent took the berry
from the table") says what was done or asked, not where things are, and is not a claim. Sentences
naming no such pair are not claims (strategies, guardrails), and a lesson with no claim is
unchecked rather than true. Names are matched whole-word and longest first, so "cake scented
passkey" is not read as "passkey".

An action record is checked by its typed experience: each thing seen in a place before the episode
held it is a claim that it is in that room (`experience_claims`). A record written before
experiences were typed ("[in textworld/1] > go north | > take mug || Seen: start = book ; go north
= mug") is checked by its places, each thing seen a claim that it is in the room the moves lead to
from the start. An episode's actions are what it did, not claims.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rbdspy.envs.textworld_facts import HouseFacts
from rbdspy.envs.textworld_record_text import move_of, places, prose_of
from rbdspy.types import Experience

DIRECTION_WORDS = ("north", "south", "east", "west")
_SENTENCES = re.compile(r"[.;!?\n]+")
_OF_FORM = re.compile(r"\b(north|south|east|west)\s+of\b")
_GO_FORM = re.compile(r"\b(?:go|head|move|walk)\s+(north|south|east|west)\b")
# What stands between a thing and where it is when a sentence states it: "<thing> is in the
# <place>", "<thing> can be found on the <place>"; or the other way round, "<place> contains the
# <thing>", "in the <place> there is a <thing>". A negation is not read as a claim.
_ARTICLE = r"(?:the\s+|a\s+|an\s+|some\s+)?"
_THING_THEN_PLACE = re.compile(
    r"^\s*,?\s*(?:which\s+|that\s+)?"
    r"(?:(?:is|are|was|were)(?:\s+(?:located|kept|stored|found|placed|lying|sitting))?|lies|sits|stands|rests|"
    r"can be found|could be found)\s+(?:on top of|inside|on|in)\s+" + _ARTICLE + r"$"
)
_PLACE_THEN_THING = re.compile(r"^\s*,?\s*(?:there\s+(?:is|are|was|were)|contains|holds|has)\s+" + _ARTICLE + r"$")
# Which key opens what, stated: "<key> unlocks the <lock>", "use the <key> to open the <lock>",
# "unlock the <lock> with the <key>".
_KEY_THEN_LOCK = re.compile(
    r"^\s*(?:(?:opens|unlocks|fits)|(?:can|will)\s+(?:open|unlock)|is the key (?:to|for)|to (?:open|unlock))\s+"
    + _ARTICLE
    + r"$"
)
_LOCK_THEN_KEY = re.compile(r"^\s*(?:is\s+)?(?:opened|unlocked)?\s*(?:with|using|by)\s+" + _ARTICLE + r"$")
_OPEN_BEFORE = re.compile(r"\b(?:open|unlock|opened|unlocked)\s+" + _ARTICLE + r"$")


@dataclass(frozen=True)
class Claim:
    """One checkable statement of a lesson and whether the world agrees."""

    kind: str  # "place", "route" or "key"
    text: str
    true: bool


def _mentions(sentence: str, names: list[str]) -> list[tuple[int, int, str]]:
    """The names a sentence mentions with their spans, in order; longest names first, so a
    longer name hides the ones inside it."""
    found: list[tuple[int, int, str]] = []
    for name in sorted(names, key=len, reverse=True):
        for match in re.finditer(rf"\b{re.escape(name.lower())}\b", sentence):
            start, end = match.span()
            if not any(a < end and start < b for a, b, _ in found):
                found.append((start, end, name))
    return sorted(found)


def _key_stated(sentence: str, spans: dict[str, tuple[int, int]], key: str, lock: str) -> bool:
    """Whether the sentence states that `key` opens `lock`."""
    (key_start, key_end), (lock_start, lock_end) = spans[key], spans[lock]
    if key_end <= lock_start:
        return bool(_KEY_THEN_LOCK.match(sentence[key_end:lock_start]))
    between = sentence[lock_end:key_start]
    return bool(_LOCK_THEN_KEY.match(between)) and (
        bool(_OPEN_BEFORE.search(sentence[:lock_start])) or bool(re.search(r"(?:opened|unlocked)", between))
    )


def _stated(sentence: str, spans: dict[str, tuple[int, int]], thing: str, where: str) -> bool:
    """Whether the sentence states that `thing` is at `where` (rather than asking for it, or
    telling what was done with it)."""
    (thing_start, thing_end), (where_start, where_end) = spans[thing], spans[where]
    if thing_end <= where_start:
        return bool(_THING_THEN_PLACE.match(sentence[thing_end:where_start]))
    return bool(_PLACE_THEN_THING.match(sentence[where_end:thing_start]))


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
    out: list[Claim] = _seen_claims(text, facts)
    for raw in _SENTENCES.split(prose_of(text or "")):
        sentence = " ".join(raw.lower().replace("_", " ").split())
        if not sentence:
            continue
        found = _mentions(sentence, names)
        spans = {name: (start, end) for start, end, name in reversed(found)}  # first mention of each
        mentioned = [name for _, _, name in found]
        rooms = [m for m in mentioned if m in facts.rooms]
        objects = [m for m in mentioned if m not in facts.rooms]
        route = _route(sentence, rooms, facts) if any(w in sentence for w in DIRECTION_WORDS) else None
        if route is not None:
            out.append(Claim("route", sentence, route))
            continue
        keys = [m for m in objects if kind_of.get(m) == "k"]
        locks = [m for m in objects if m in facts.key_for or kind_of.get(m) in ("c", "d")]
        if keys and locks:
            key, target = keys[0], locks[0]
            if _key_stated(sentence, spans, key, target):
                out.append(Claim("key", sentence, facts.key_for.get(target) == key))
                continue
        holders = [m for m in objects if kind_of.get(m) in ("s", "c") and m not in facts.place]
        portable = [m for m in objects if m in facts.place]
        if len(portable) == 1 and len(holders) == 1:
            if _stated(sentence, spans, portable[0], holders[0]):
                out.append(Claim("place", sentence, facts.place[portable[0]][1] == holders[0]))
        elif len(objects) == 1 and len(rooms) == 1 and _stated(sentence, spans, objects[0], rooms[0]):
            out.append(Claim("place", sentence, facts.room_of.get(objects[0]) == rooms[0]))
    return out


def _seen_claims(text: str, facts: HouseFacts) -> list[Claim]:
    """An action record's places: each thing seen is in the room its moves lead to from the start.
    Names the world does not know (a door, a misread word) are not claims."""
    room_of = {thing.lower(): room for thing, room in facts.room_of.items()}
    out = []
    for entries in places(text or ""):
        for moves, things in entries:
            room = _room_after(moves, facts)
            for thing in things:
                if thing in room_of:
                    where = " then ".join(moves) or "start"
                    out.append(Claim("place", f"{where} = {thing}", room is not None and room_of[thing] == room))
    return out


def _room_after(moves: list[str], facts: HouseFacts) -> str | None:
    """The room `moves` lead to from the start, None if one of them leads nowhere."""
    room = facts.start
    for move in moves:
        direction = move_of(move)
        room = next((to for d, to, _ in facts.exits.get(room, []) if d == direction), None)
        if room is None:
            return None
    return room


def experience_claims(experience: Experience, facts: HouseFacts) -> list[Claim]:
    """A typed experience's sightings: each thing the world knows, seen in a place before the
    episode held it, is in that room."""
    room_of = {thing.lower(): room for thing, room in facts.room_of.items()}
    seen = [(experience.start, t) for t in experience.in_view] if experience.start else []
    held = set(experience.carrying)
    for step in experience.steps:
        held |= set(step.carrying)
        if step.arrived:
            seen += [(step.arrived, t) for t in step.in_view if t not in held]
    out = []
    for place, thing in dict.fromkeys(seen):
        if thing.lower() in room_of:
            out.append(Claim("place", f"{place}: {thing}", room_of[thing.lower()] == place.lower()))
    return out


def lesson_truth(text: str, facts: HouseFacts, experience: Experience | None = None) -> dict[str, int]:
    """A lesson's claims counted: how many, how many true (0 and 0 for a lesson with none); an
    item's typed experience is checked as data."""
    found = claims(text, facts) + (experience_claims(experience, facts) if experience is not None else [])
    return {"claims": len(found), "true": sum(c.true for c in found)}
