"""A bank that travels inside a logged program: `rbdspy.log_bank(program, snapshot=True)`.

By default a pickled program carries its bank by reference (`LazyStore`, store.py): the served model
reopens the bank where it lives and keeps learning into it. A model that must be self-contained
(served on another machine, archived with its run) carries a snapshot instead: every item with its
stored vectors, inside the model's own artifact. Loading restores it into a fresh bank, in
`RBDSPY_SNAPSHOT_DIR` when set, else a temporary directory; what the served program learns goes
there, never back into the bank it was logged from.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from typing import Any

import numpy as np

from rbdspy.memory.store import LazyStore, MemoryStore, reference
from rbdspy.types import MemoryItem

__all__ = ["SnapshotStore", "snapshots"]

SNAPSHOT_DIR_ENV = "RBDSPY_SNAPSHOT_DIR"


def snapshot_of(store: MemoryStore) -> tuple[type, tuple]:
    """The `__reduce__` value of a store being snapshotted: its items and vectors, by value."""
    _, (_, embedder, key, _) = reference(store.path, store.embedder, store.key)  # checks the embedder pickles
    lines, task, own = [], [], []
    for items, task_vectors, item_vectors in store.embedded_batches():
        lines += [item.model_dump_json() for item in items]
        task.append(task_vectors)
        own.append(item_vectors)
    dim = store.stats()["embedder"]["dim"] or 0

    def stack(parts: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(parts) if parts else np.zeros((0, dim), dtype=np.float32)

    name = store.stats()["embedder"]["name"]
    return SnapshotStore, (lines, stack(task), stack(own), name, embedder, key)


class SnapshotStore(LazyStore):
    """Stands in for a snapshotted bank; restores it into a fresh bank on first use."""

    def __init__(self, lines: list[str], task: np.ndarray, own: np.ndarray, embedder_name, embedder=None, key="task"):
        super().__init__("(snapshot)", embedder, key)
        self._snapshot = (lines, task, own, embedder_name)

    def _open(self):
        if self._store is None:
            lines, task, own, embedder_name = self._snapshot
            _, embedder, key, _ = self._args
            root = os.environ.get(SNAPSHOT_DIR_ENV) or None
            directory = tempfile.mkdtemp(prefix="rbdspy-snapshot-", dir=root)
            store = MemoryStore(directory, embedder=embedder, key=key)
            if lines:
                items = [MemoryItem.model_validate_json(line) for line in lines]
                store.add_embedded(items, task, own, embedder_name=embedder_name, normalised=True)
            self._store = store
        return self._store

    def __reduce__(self):
        return SnapshotStore, (*self._snapshot[:3], self._snapshot[3], self._args[1], self._args[2])

    def __repr__(self) -> str:
        state = f"restored in {self._store.path}" if self._store is not None else "not restored yet"
        return f"SnapshotStore({len(self._snapshot[0])} items, {state})"


@contextmanager
def snapshots(program: Any):
    """While active, every MemoryStore the program holds pickles as a snapshot of its items."""
    stores = []
    for module in [program, *(m for _, m in getattr(program, "named_sub_modules", lambda: [])())]:
        store = getattr(module, "store", None)
        if isinstance(store, MemoryStore) and all(store is not s for s in stores):
            stores.append(store)
    for store in stores:
        store._pickle_as_snapshot = snapshot_of
    try:
        yield stores
    finally:
        for store in stores:
            store._pickle_as_snapshot = None
