"""How records written before experiences were typed read, in TextWorld's houses: their actions
("> go north | > take mug") and the places they saw, each as the compass moves from the start and
the things there ("Seen: start = book, stand ; go north = fridge, mug").

Only the lesson-truth checker reads this (`textworld_truth.py`), so that `rbdspy bench
--report-only --recheck-truth` still checks the committed runs' records; new records keep their
episode as typed data (`rbdspy.types.Experience`) and nothing reads their text back.
"""

from __future__ import annotations

import re

_MOVE = re.compile(r"^(?:go|move|walk|head)\s+(north|south|east|west|up|down)$")
PLACES_MARK = "Seen:"
_PLACES = re.compile(r"(?:^|\|\||\])\s*" + re.escape(PLACES_MARK) + r"\s*(.*?)\s*(?=\|\||$)")
_START = "start"
_THEN = " then "
# What a record holds besides prose: its world marker, its actions ("> go north", with what the
# environment said, "-> ...", in trajectory memory) and its places.
_RECORD_PARTS = re.compile(r"\[in [^\]\s]+\]|" + re.escape(PLACES_MARK) + r"[^\n]*?(?=\|\||\n|$)|>[^|\n]*")

Place = tuple[list[str], list[str]]  # (the moves from the start, the things seen there)


def move_of(action: str) -> str | None:
    """The direction of a move ("go north" -> "north"), None for any other action."""
    match = _MOVE.match(action.lower().strip())
    return match.group(1) if match else None


def places(memory: str) -> list[list[Place]]:
    """The places of a block of old records, one list per line that holds any, in order."""
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


def prose_of(text: str) -> str:
    """`text` without its records' world markers, actions and places, each replaced by a line
    break: what is left is what a lesson says in words."""
    return _RECORD_PARTS.sub("\n", text or "")
