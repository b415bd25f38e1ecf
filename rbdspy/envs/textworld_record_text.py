"""Action sequences as text: how a memory item writes the actions of an episode, and how they are
read back ("> go north | > take mug"), with the moves that undo each other taken out; and the
places an episode saw, each as the moves from the start and the things there
("Seen: start = book, stand ; go north = fridge, mug").

Pure text, no imports from the rest of rbdspy: the environment agent reads sequences from its
memory block (`envs/memory_routes.py`) and the extractor writes them (`lessons/action_record.py`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# An action in a memory item written as an action sequence: "> go west | > take apple" (the
# action record, the gold-exemplar control) or "> go west -> You are in ... | > take apple -> ..."
# (trajectory memory).
_MEMORY_ACTION = re.compile(r"(?:^|[|\s])>\s*([^|>\n]+?)\s*(?=->|\||\n|$)")
_MOVE = re.compile(r"^(?:go|move|walk|head)\s+(north|south|east|west|up|down)$")
_OPPOSITE = {"north": "south", "south": "north", "east": "west", "west": "east", "up": "down", "down": "up"}


def format_actions(actions: list[str]) -> str:
    """`actions` as one line: "> go north | > take mug"."""
    return " | ".join(f"> {a.strip()}" for a in actions if a.strip())


def sequences(memory: str) -> list[list[str]]:
    """The action sequences of a memory block, one per line that holds any (an item's content is
    one line of the block), in the block's order (most relevant first)."""
    found = []
    for line in (memory or "").splitlines():
        actions = [m.group(1).strip().lower() for m in _MEMORY_ACTION.finditer(line) if m.group(1).strip()]
        if actions:
            found.append(actions)
    return found


def memory_actions(memory: str) -> list[str]:
    """Every action of the memory block's sequences, in order."""
    return [action for sequence in sequences(memory) for action in sequence]


def move_of(action: str) -> str | None:
    """The direction of a move ("go north" -> "north"), None for any other action."""
    match = _MOVE.match(action.lower().strip())
    return match.group(1) if match else None


def opposite(move: str) -> str:
    """The move that undoes `move`, in its own words ("move east" -> "move west")."""
    direction = move_of(move)
    return re.sub(rf"\b{direction}$", _OPPOSITE[direction], move.lower().strip()) if direction else move


def simplify(actions: list[str]) -> list[str]:
    """`actions` with each move that its very next move undoes removed (repeatedly)."""
    kept: list[str] = []
    for action in actions:
        move, last = move_of(action), move_of(kept[-1]) if kept else None
        if move and last and _OPPOSITE[last] == move:
            kept.pop()
        else:
            kept.append(action)
    return kept


# The places an episode saw, written after its actions: "... || Seen: start = book, stand ; go
# north = fridge, mug ; go north then go east = candy bar". No ">" in it, so `sequences` skips it.
# A record with no action accepted holds only its places, after its world marker: "[in w] Seen: ...".
PLACES_MARK = "Seen:"
_PLACES = re.compile(r"(?:^|\|\||\])\s*" + re.escape(PLACES_MARK) + r"\s*(.*?)\s*(?=\|\||$)")
_START = "start"
_THEN = " then "
_THINGS_OF = re.compile(r"^(?:examine|look at)\s+(?:the\s+)?(.+)$")

Place = tuple[list[str], list[str]]  # (the moves from the start, the things seen there)


def things_named(admissible: Iterable[str] | None) -> list[str]:
    """The things an admissible list lets the agent look at ("examine mug", "look at fridge"), in
    order, once each: what is in view where the agent is."""
    found: dict[str, None] = {}
    for action in admissible or []:
        match = _THINGS_OF.match(action.strip().lower())
        if match:
            found.setdefault(match.group(1).strip(), None)
    return list(found)


def format_places(places: list[Place]) -> str:
    """`places` as one segment: "Seen: start = book, stand ; go north = fridge, mug"."""
    entries = [f"{_THEN.join(path) or _START} = {', '.join(things)}" for path, things in places if things]
    return f"{PLACES_MARK} {' ; '.join(entries)}" if entries else ""


def places(memory: str) -> list[list[Place]]:
    """The places of a memory block, one list per line that holds any, in the block's order."""
    found = []
    for line in (memory or "").splitlines():
        for segment in _PLACES.findall(line):
            entries = []
            for entry in segment.split(";"):
                path, _, things = entry.partition("=")
                path, things = path.strip().lower(), [t.strip().lower() for t in things.split(",") if t.strip()]
                moves = [] if path == _START else [m.strip() for m in path.split(_THEN.strip()) if m.strip()]
                if things and all(move_of(m) for m in moves):
                    entries.append((moves, things))
            if entries:
                found.append(entries)
    return found


# The world a record's actions and places hold in, written first ("[in textworld/1] > go north |
# ..."): a route is read only from records of the world the agent is in, or from unscoped ones.
_SCOPE = re.compile(r"\[in ([^\]\s]+)\]")


def scoped(scope: str | None) -> str:
    """The marker that opens a record of world `scope` ("[in textworld/1] "); "" for none."""
    return f"[in {scope}] " if scope else ""


# What a record holds besides prose: its world marker, its actions ("> go north", with what the
# environment said, "-> ...", in trajectory memory) and its places.
_RECORD_PARTS = re.compile(r"\[in [^\]\s]+\]|" + re.escape(PLACES_MARK) + r"[^\n]*?(?=\|\||\n|$)|>[^|\n]*")


def prose_of(text: str) -> str:
    """`text` without its records' world markers, actions and places, each replaced by a line
    break: what is left is what a lesson says in words."""
    return _RECORD_PARTS.sub("\n", text or "")


def in_scope(memory: str, scope: str | None) -> str:
    """The lines of `memory` whose record holds where the agent is: unscoped lines, and scoped
    ones of `scope` (with no `scope` known, only unscoped lines)."""
    kept = []
    for line in (memory or "").splitlines():
        marker = _SCOPE.search(line)
        if marker is None or marker.group(1) == scope:
            kept.append(line)
    return "\n".join(kept)
