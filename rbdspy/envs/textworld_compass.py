"""Compass moves in the TextWorld family's grammar (TextWorld houses: "go north"; TextWorld-Express:
"move north"): the move that undoes one, which their adapters name as the way back."""

from __future__ import annotations

import re

_MOVE = re.compile(r"^(go|move)\s+(north|south|east|west|up|down)$")
_OPPOSITE = {"north": "south", "south": "north", "east": "west", "west": "east", "up": "down", "down": "up"}


def opposite_move(action: str) -> str | None:
    """The compass move that undoes `action`, in its own verb; None for any other action."""
    match = _MOVE.match(" ".join(action.lower().split()))
    return f"{match.group(1)} {_OPPOSITE[match.group(2)]}" if match else None
