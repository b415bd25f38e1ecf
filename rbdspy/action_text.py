"""Action sequences as text: how a memory item writes the actions of an episode, and how they are
read back ("> go north | > take mug"), with the moves that undo each other taken out.

Pure text, no imports from the rest of rbdspy: the environment agent reads sequences from its
memory block (`envs/memory_routes.py`) and the extractor writes them (`lessons/action_record.py`).
"""

from __future__ import annotations

import re

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
