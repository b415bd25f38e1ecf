"""Memory as a suggested next action: routes read from remembered action sequences.

On a world that persists, a past episode's actions are a map: "go north, take mug" says that the
mug is one room north of where every quest starts. A small agent does not read that out of prose
(calibration: written-out facts did not lift it), but it does play an action offered first in
its admissible list. So the memory block's action sequences are read as routes, and the agent is
offered the next step of the route to what its task names:

1. The task's things, in order: "Put the loaf of bread on the stand." names the loaf of bread (to
   fetch) and then the stand (where to bring it).
2. The route to a thing: the first remembered sequence with an action naming it; the moves and the
   doors opened before that action (from the start, where every episode of the world begins); to
   fetch, that action too ("take loaf of bread"). A move followed by its opposite cancels out.
   When no action names it, the first remembered place where it was seen ("Seen: go north =
   fridge, mug", written by `action_record="every"`): the moves from the start to that place.
   A record that names its world ("[in textworld/1] ...") is read only in that world.
3. From where the agent is: back along its own moves to where they left the route, then on along
   the route. Once the agent has taken (or opened) the first thing, the route leads to the second;
   with no second thing, nothing more is suggested.

What is done with the things at the end ("put loaf of bread on stand", "eat grape") is never
suggested: a sequence about another goal says nothing about it, and the agent's own choice (or
`focus`) makes it; a route ends with taking the first thing or in the second thing's room. A suggestion
is always an admissible action, shown first, never played for the agent; an action the
environment does not accept now ends the suggestion rather than skipping ahead to a wrong room.
"""

from __future__ import annotations

import re

from rbdspy.action_text import Place, in_scope, move_of, opposite, places, sequences, simplify

_DOORWAY = re.compile(r"^(?:open|unlock)\b")
_FETCH = re.compile(r"^(?:take|open|unlock)\b")
_LEADING_VERB = re.compile(r"^\s*[a-z]+\s+(?:the\s+|a\s+|an\s+)?")
_RELATION = re.compile(r"\s+(?:on|in|into|onto|from|with|to)\s+(?:the\s+|a\s+|an\s+)?")
_WORDS = re.compile(r"[a-z0-9]+")
_FILLER = frozenset({"the", "a", "an", "of"})


def task_things(task: str) -> list[frozenset[str]]:
    """The things an imperative task names, in order, each as its words: "Put the loaf of bread
    on the stand." -> [{loaf, bread}, {stand}]. Only the task's first line is read."""
    first = (task or "").strip().splitlines()[0].lower() if (task or "").strip() else ""
    body = _LEADING_VERB.sub("", first.rstrip(". !?"), count=1)
    things = []
    for part in _RELATION.split(body):
        words = frozenset(_WORDS.findall(part)) - _FILLER
        if words:
            things.append(words)
    return things


def names(action: str, thing: frozenset[str]) -> bool:
    return bool(thing) and thing <= set(_WORDS.findall(action.lower()))


def route(
    memory_sequences: list[list[str]], thing: frozenset[str], fetch: bool, seen: list[list[Place]] | None = None
) -> list[str] | None:
    """From the start to `thing` (and, to fetch, the action that takes or opens it), as the first
    sequence naming it remembers; else the moves to the first place `seen` lists it in (the
    taking is left to the agent: whether it is "take X" or "take X from Y" is not remembered);
    None when nothing names it."""
    by_action = _route_by_action(memory_sequences, thing, fetch)
    if by_action is not None or not seen:
        return by_action
    for entries in seen:
        for moves, things in entries:
            if any(names(t, thing) for t in things):
                return simplify(list(moves))
    return None


def _route_by_action(memory_sequences: list[list[str]], thing: frozenset[str], fetch: bool) -> list[str] | None:
    for sequence in memory_sequences:
        for index, action in enumerate(sequence):
            if not names(action, thing):
                continue
            if fetch and not _FETCH.match(action):
                break  # this sequence only uses the thing (it came from elsewhere): look further
            way = [a for a in sequence[:index] if move_of(a) or (_DOORWAY.match(a) and not names(a, thing))]
            return simplify(way + ([action] if fetch else []))
    return None


def join(moves: list[str], way: list[str]) -> list[str]:
    """From where `moves` (played from the start) led to the end of `way` (a route from the
    start): back along the moves to where they left the route, then on along the route."""
    shared, start = 0, 0  # moves the agent shares with the route; where the route goes on from
    for index, action in enumerate(way):
        if not move_of(action):
            continue
        if shared < len(moves) and move_of(moves[shared]) == move_of(action):
            shared, start = shared + 1, index + 1
        else:
            break
    back = [opposite(move) for move in reversed(moves[shared:])]
    return simplify(back + way[start:])


class RouteSuggester:
    """The next step towards what the task names, read from the memory's action sequences."""

    def __init__(self, memory: str, task: str, scope: str | None = None):
        memory = in_scope(memory, scope)  # a record of another world's ways is no way here
        self.sequences = sequences(memory)
        self.seen = places(memory)
        self.things = task_things(task)
        self.moves: list[str] = []  # the agent's moves from the start, simplified
        self.fetched = False

    def path(self) -> list[str]:
        if not self.things or not (self.sequences or self.seen):
            return []
        if not self.fetched:
            target, fetch = self.things[0], True
        elif len(self.things) > 1:
            target, fetch = self.things[-1], False
        else:
            return []
        way = route(self.sequences, target, fetch, self.seen)
        if way is None:
            return []
        return join(self.moves, way)

    def suggest(self, admissible: list[str]) -> str | None:
        by_lower = {a.lower(): a for a in admissible}
        for action in self.path():
            if action in by_lower:
                return by_lower[action]
            if move_of(action):
                return None  # the way is not open from here: offer nothing rather than a wrong turn
            # a door or a lid on the way that is open already: go on to the next step
        return None

    def played(self, action: str, valid: bool) -> None:
        if not valid:
            return
        action = action.lower().strip()
        if move_of(action):
            self.moves = simplify(self.moves + [action])
        if self.things and _FETCH.match(action) and names(action, self.things[0]):
            self.fetched = True  # taken or opened: examining it is not fetching it
