"""A compact admissible-action list for ScienceWorld, small enough for a small LM's prompt.

Why this exists: ScienceWorld's own "valid" list (`getValidActionObjectCombinations`) holds
thousands of entries in one room (about 2,800 in the kitchen, 1,700 of them `connect X to Y`),
and `getPossibleActionObjectCombinations` is larger still because it ignores object state. An LM
cannot read that, and most entries are nonsense ("connect banana to sodium chloride").

What we keep, in priority order, from the simulator's valid combinations (so every concrete entry
is one the simulator accepts in the current state):

1. free information actions: look around, inventory, task;
2. state-aware single-object actions that the simulator already filters by state: go to, open,
   close, pick up (not furniture or fixtures), put down (= what is in the inventory), activate,
   deactivate, read;
3. focus on X for objects that are not fixtures (rooms, doors, the agent, air). Focus matters:
   focusing on the wrong object ends the task as a failure;
4. two-object actions whose first object is held (in the inventory or inside something held):
   move X to Y, pour X into Y, use X on Y, dunk X into Y; Y not a fixture;
5. connect X to Y only between electrical contacts (anode, cathode, terminal);
6. mix X for containers; look at X; wait1, wait;

Within a kind, objects whose names share words with the task description come first, and the
two-object actions take turns between held objects (the orange every episode starts with would
otherwise crowd out the pot the task is about). The list is capped (`max_actions`, default 60,
about 400 tokens), each kind taking at most its quota (`KINDS`) on a first pass before the rest
fill the remaining room. Finally a few action *templates* with OBJ placeholders are appended
(`move OBJ to OBJ`, `focus on OBJ`, ...), so actions the cap or the "held" rule left out can still
be written from the objects named in the observation.

Coverage is partial by design: the action a gold path takes next is often not in the list
verbatim, as the cap and the "held" rule leave some out and ScienceWorld names the same object
differently from one listing to the next ("door to art studio" / "art studio door",
"thermometer" / "thermometer in inventory"); the rest can be written from the templates.
Computing the list costs two JSON round trips a step.

Measured: docs/results/environments.md#environments-and-the-agent-benchmarksenv_benchpy
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from typing import Any

from rbdspy.core.words import words_of

# ScienceWorld template ids (from getPossibleActionsWithIDs; stable in scienceworld 1.2.3).
OPEN, CLOSE, GO, LOOK_AROUND, LOOK_AT, LOOK_IN = 0, 1, 2, 3, 4, 5
ACTIVATE, DEACTIVATE, EAT, MOVE, POUR, FOCUS = 6, 7, 8, 9, 10, 11
RESET_TASK, USE, READ, FLUSH, CONNECT, DISCONNECT = 12, 13, 14, 15, 16, 17
WAIT1, WAIT, INVENTORY, PICK_UP, PUT_DOWN, MIX, TASK, DUNK = 18, 19, 20, 21, 22, 23, 24, 26

INFO_ACTIONS = ("look around", "inventory", "task")
TEMPLATE_HINTS = (
    "focus on OBJ",
    "move OBJ to OBJ",
    "pour OBJ into OBJ",
    "use OBJ on OBJ",
    "mix OBJ",
    "look at OBJ",
    "connect OBJ to OBJ",
)

# Two-object templates: (separator between the objects, verb prefix).
_TWO_OBJECT = {MOVE: (" to ", "move "), POUR: (" into ", "pour "), USE: (" on ", "use "), DUNK: (" into ", "dunk ")}
FIXTURE_CLASSES = (".location.", ".portal.", ".agent.", "substance.Air")
_CONTACT = re.compile(r"\b(anode|cathode|terminal)\b")
_STOP = {
    "a",
    "an",
    "the",
    "to",
    "in",
    "on",
    "of",
    "and",
    "your",
    "is",
    "it",
    "then",
    "first",
    "that",
    "with",
    "for",
    "you",
}


# Priority order of the kinds of actions kept, with how many of each a first pass takes (see the
# module docstring). Focus and look-at are capped hard: focus is used once or twice a task (and a
# wrong focus fails it), look-at is rarely needed; both are also offered as templates. The quotas
# sum to 57, so with the 3 information actions every kind gets its quota under the default cap.
KINDS: tuple[tuple[str, frozenset[int], int], ...] = (
    ("navigate", frozenset({GO, OPEN, CLOSE}), 10),
    ("hold", frozenset({PICK_UP, PUT_DOWN}), 10),
    ("device", frozenset({ACTIVATE, DEACTIVATE, READ}), 6),
    ("focus", frozenset({FOCUS}), 4),
    ("apply", frozenset({MOVE, POUR, USE, DUNK}), 14),
    ("connect", frozenset({CONNECT}), 8),
    ("mix", frozenset({MIX}), 2),
    ("look", frozenset({LOOK_AT}), 1),
    ("wait", frozenset({WAIT1, WAIT}), 2),
)


def _task_words(task_description: str) -> set[str]:
    return {w for w in words_of(task_description) if w not in _STOP and len(w) > 2}


def compact_actions(
    combos: Sequence[Mapping[str, Any]],
    type_classes: Mapping[int, str],
    task_description: str = "",
    max_actions: int = 60,
    templates: bool = True,
) -> list[str]:
    """Choose the compact list from `getValidActionObjectCombinationsJSON()['validActions']`
    (`combos`: dicts with action, template_id, obj_ids, type_ids) and the object classes
    (`type_classes`: type id -> Java class name, from getPossibleObjectReferentTypesLUTJSON)."""

    def cls(type_id: int) -> str:
        return type_classes.get(int(type_id), "")

    def fixture(type_id: int, name: str) -> bool:
        return name == "inventory" or any(part in cls(type_id) for part in FIXTURE_CLASSES)

    def furniture(type_id: int) -> bool:
        return ".furniture." in cls(type_id)

    # What the agent holds: the referents of the valid "put down X" actions (the simulator
    # writes them as the other actions do, e.g. "thermometer in inventory").
    held: set[str] = set()
    for c in combos:
        if c["template_id"] == PUT_DOWN:
            held.add(c["action"][len("put down ") :])

    holders = held | {"inventory"}

    def first_is_held(template_id: int, action: str) -> bool:
        """The first object is held, or sits inside something held ("seed in seed jar")."""
        sep, verb = _TWO_OBJECT[template_id]
        body = action[len(verb) :]
        return any(body.startswith(h + sep) or f" in {h}{sep}" in body for h in holders)

    words = _task_words(task_description)

    # Where a held thing goes matters: devices (stove, sink, freezer) and containers first,
    # furniture last.
    target_rank: dict[str, int] = {}

    def rank_target(action: str, type_id: int) -> None:
        c = cls(type_id)
        target_rank[action] = 0 if ".devices." in c else 3 if ".furniture." in c else 1 if ".containers." in c else 2

    def relevance(action: str) -> tuple[int, int, int, str]:
        overlap = len(words & set(words_of(action)))
        return (-overlap, target_rank.get(action, 0), len(action), action)

    buckets: dict[str, list[str]] = {kind: [] for kind, _, _ in KINDS}
    kind_of = {tid: kind for kind, tids, _ in KINDS for tid in tids}
    for c in combos:
        tid, action = c["template_id"], c["action"]
        kind = kind_of.get(tid)
        if kind is None:
            continue
        types = c.get("type_ids") or []
        if tid in (PICK_UP,) and types and (fixture(types[0], action[len("pick up ") :]) or furniture(types[0])):
            continue
        if tid in (FOCUS, LOOK_AT, MIX) and types and fixture(types[0], action.split(" ", 2)[-1]):
            continue
        if tid == MIX and types and ".containers." not in cls(types[0]):
            continue
        if tid in (MOVE, POUR, USE, DUNK):
            sep, verb = _TWO_OBJECT[tid]
            if len(types) < 2 or fixture(types[1], "") or fixture(types[0], "") or action.endswith(f"{sep}inventory"):
                continue
            if not action.startswith(verb) or not first_is_held(tid, action):
                continue
            rank_target(action, types[1])
        if tid == CONNECT and not _connects_contacts(action):
            continue
        buckets[kind].append(action)

    for kind in buckets:
        buckets[kind] = sorted(set(buckets[kind]), key=relevance)
    # Every held object gets its share of the two-object actions: the orange every episode
    # starts with would otherwise crowd out the pot the task is about.
    buckets["apply"] = _round_robin(buckets["apply"], key=_first_object)

    chosen: list[str] = list(INFO_ACTIONS)
    # First pass: each kind up to its quota, in priority order; second pass: what is left, in the
    # same order, until the cap.
    rest: list[str] = []
    for kind, _, quota in KINDS:
        chosen.extend(buckets[kind][:quota])
        rest.extend(buckets[kind][quota:])
    chosen.extend(rest)
    chosen = chosen[: max(max_actions, len(INFO_ACTIONS))]
    if templates:
        chosen.extend(TEMPLATE_HINTS)
    return chosen


def _first_object(action: str) -> str:
    """The first object of a two-object action ("move metal pot to stove" -> "metal pot")."""
    for sep, verb in _TWO_OBJECT.values():
        if action.startswith(verb) and sep in action:
            body = action[len(verb) :]
            return body[: body.index(sep)]
    return ""


def _round_robin(actions: list[str], key) -> list[str]:
    groups: dict[str, list[str]] = {}
    for action in actions:
        groups.setdefault(key(action), []).append(action)
    out: list[str] = []
    for row in itertools.zip_longest(*groups.values()):
        out.extend(a for a in row if a is not None)
    return out


def _connects_contacts(action: str) -> bool:
    body = action[len("connect ") :]
    if " to " not in body:
        return False
    a, _, b = body.partition(" to ")
    return bool(_CONTACT.search(a)) and bool(_CONTACT.search(b))


_AMBIGUOUS = re.compile(r"^(\d+):\s*(.+)$", re.M)


def ambiguity_choices(observation: str) -> list[str] | None:
    """When ScienceWorld cannot tell which object an action meant, it lists numbered options and
    expects the number as the next action; those numbers are then the admissible actions."""
    if not observation.startswith("Ambiguous request"):
        return None
    return [m.group(1) for m in _AMBIGUOUS.finditer(observation)]
