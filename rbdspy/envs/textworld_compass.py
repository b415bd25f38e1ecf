"""The TextWorld family's action grammar, shared by its adapters (TextWorld houses and
TextWorld-Express): how its actions and tasks are worded (`TEXTWORLD_LANGUAGE`), and its compass
moves (houses: "go north"; TextWorld-Express: "move north") with the move that undoes one, which
the adapters name as the way back."""

from __future__ import annotations

import re

from rbdspy.envs.base import ActionLanguage

# A task is one imperative the game can do in one action ("Put the mug in the fridge." is done by
# "insert mug into fridge"), and a task's "go", "put" or "take" names no thing: they begin the
# game's actions whatever thing those are about.
TEXTWORLD_LANGUAGE = ActionLanguage(
    plain_verbs=frozenset({"go", "put", "take"}),
    imperative_tasks=True,
    verb_forms={"put": ("put", "insert", "place")},
)

_MOVE = re.compile(r"^(go|move)\s+(north|south|east|west|up|down)$")
_OPPOSITE = {"north": "south", "south": "north", "east": "west", "west": "east", "up": "down", "down": "up"}


def opposite_move(action: str) -> str | None:
    """The compass move that undoes `action`, in its own verb; None for any other action."""
    match = _MOVE.match(" ".join(action.lower().split()))
    return f"{match.group(1)} {_OPPOSITE[match.group(2)]}" if match else None
