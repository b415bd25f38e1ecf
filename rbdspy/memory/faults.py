"""Fault points: the one documented seam through which tests make a store fail mid-write.

A store write is durable at its SQLite commit; everything after it (applying the change to the
in-memory FAISS indexes, saving them) is derived, and the store must recover from a process that
dies or raises there. Tests prove that by giving an action to a named point of a store's
`faults`, instead of replacing the store's private methods:

    store.faults.set(AFTER_COMMIT, lambda: os._exit(0))   # killed right after the commit
    store.faults.set(INDEX_UPDATE, crash)                 # applying the change to the live index raises
    store.faults.set(REBUILD, forbid)                     # fail if the indexes are rebuilt from SQLite

`MemoryStore(path, faults=Faults({REBUILD: forbid}))` sets them from the start. The store calls
`hit(point)` at each point; with no action set (always, outside tests) that does nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

AFTER_COMMIT = "after_commit"  # a write committed to SQLite, nothing applied to the indexes yet
INDEX_UPDATE = "index_update"  # about to apply a committed write to the live in-memory indexes
REBUILD = "rebuild"  # about to rebuild both indexes from SQLite (they were missing, corrupt or behind)
POINTS = (AFTER_COMMIT, INDEX_UPDATE, REBUILD)

__all__ = ["AFTER_COMMIT", "INDEX_UPDATE", "POINTS", "REBUILD", "Faults"]


class Faults:
    """Actions to run at named fault points (see the module docstring); none by default."""

    def __init__(self, actions: Mapping[str, Callable[[], Any]] | None = None):
        self._actions: dict[str, Callable[[], Any]] = {}
        for point, action in (actions or {}).items():
            self.set(point, action)

    def set(self, point: str, action: Callable[[], Any]) -> None:
        """Run `action()` (typically one that raises or exits) each time the store reaches `point`."""
        if point not in POINTS:
            raise ValueError(f"unknown fault point {point!r}; known: {', '.join(POINTS)}")
        if not callable(action):
            raise TypeError(f"the action for fault point {point!r} must be callable; got {type(action).__name__}")
        self._actions[point] = action

    def clear(self, point: str | None = None) -> None:
        """Remove the action of `point`, or of every point."""
        if point is None:
            self._actions.clear()
        else:
            self._actions.pop(point, None)

    def hit(self, point: str) -> None:
        """Called by the store at `point`: runs its action, if one is set."""
        action = self._actions.get(point)
        if action is not None:
            action()

    def __repr__(self) -> str:
        return f"Faults({sorted(self._actions)})"
