"""What a MemoryStore does with the whole bank at once: export it to JSONL, import a JSONL export,
hand every item with its stored vectors to a migration, and report its stats.

`WholeBankMixin` is mixed into `MemoryStore` (store.py) and works through the store's lock,
database, vectors and embedding, as the store's own methods do.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from rbdspy.memory.embedders import Embedder
from rbdspy.memory.jsonl import read_items, split_new, write_lines
from rbdspy.memory.pg_search import PgVectors
from rbdspy.memory.postgres import PgDatabase
from rbdspy.memory.sqlite import Database
from rbdspy.memory.store_embedding import StoreEmbedding
from rbdspy.memory.vector_index import VectorIndex
from rbdspy.types import MemoryItem

logger = logging.getLogger("rbdspy.memory.store")  # reported with the store's messages


class WholeBankMixin:
    """Whole-bank operations of `MemoryStore`; see the module docstring."""

    # What the store provides (store.py).
    key: str
    path: Path | str
    namespace: str | None
    backend: str
    embedder: Embedder | None
    _lock: threading.RLock
    _db: Database | PgDatabase
    _vectors: VectorIndex | PgVectors
    _embedding: StoreEmbedding
    _check_open: Callable[[], None]
    embed_items: Callable[[Sequence[MemoryItem]], tuple[np.ndarray, np.ndarray]]
    _insert: Callable[..., list[str]]

    def export_jsonl(self, path: str | os.PathLike[str]) -> int:
        """Write every item, in insertion order, as one MemoryItem JSON object per line (no
        vectors: importing re-embeds). Returns the number of items written."""
        with self._lock:
            self._check_open()
            with self._db.read_tx():
                return write_lines(path, self._db.item_lines())

    def import_jsonl(
        self, path: str | os.PathLike[str], on_conflict: Literal["skip", "error"] = "skip", batch_size: int = 256
    ) -> int:
        """Add the items of a JSONL export, re-embedding them with this store's embedder.

        The whole file is validated first (a malformed line raises ValueError naming its line
        number, and nothing is imported). Items whose id is already stored, or repeated in the
        file, are skipped (on_conflict="skip", logged with their count) or raise ValueError
        (on_conflict="error"). Returns the number of items added.
        """
        if on_conflict not in ("skip", "error"):
            raise ValueError(f"on_conflict must be 'skip' or 'error', got {on_conflict!r}.")
        self._embedding.require("import_jsonl (items are re-embedded)")
        items = read_items(path)
        with self._lock:
            self._check_open()
            seen = set(self._db.existing_ids([item.id for item in items]))
        fresh, repeated = split_new(items, seen, raise_on_repeat=on_conflict == "error", source=path)
        if fresh:
            # All or nothing: embed every item first (in batches, outside any transaction), then
            # write them in one transaction, so an embedder that fails part-way stores nothing.
            vectors = [
                self.embed_items(fresh[start : start + batch_size]) for start in range(0, len(fresh), batch_size)
            ]
            task = np.concatenate([t for t, _ in vectors])
            own = np.concatenate([o for _, o in vectors])
            self._insert(fresh, task, own, with_embedder=True)
        if repeated:
            logger.info("import_jsonl(%s): skipped %d item(s) whose id is already stored.", path, len(repeated))
        return len(fresh)

    def embedded_batches(self, size: int = 1000) -> Iterator[tuple[list[MemoryItem], np.ndarray, np.ndarray]]:
        """Every item with its stored vectors, in insertion order, `size` items at a time, as
        (items, task vectors, item vectors): what a migration copies to another bank, so
        nothing is re-embedded. Rows that do not validate are skipped (and reported)."""
        with self._lock:
            self._check_open()
            with self._db.read_tx():
                yield from self._db.embedded_batches(size)

    def stats(self) -> dict[str, Any]:
        """Counts by source and scope, the recorded embedder, the files' sizes and whether the
        in-memory indexes are in step with the database."""
        with self._lock:
            self._check_open()
            with self._db.read_tx():
                count = self._db.count()
                by_source, by_scope = self._db.counts()
                db_seq = self._db.change_seq()
                meta = self._db.read_meta()
                decided, wins = self._db.base_rate()
                retired = self._db.retired_count()
            return {
                "backend": self.backend,
                "namespace": self.namespace,
                "count": count,
                "retired": retired,
                "by_source": by_source,
                "by_scope": by_scope,
                "tasks_decided": decided,
                "base_rate": round(wins / decided, 4) if decided else None,
                "embedder": {
                    "name": meta.get("embedder_name"),
                    "dim": int(meta["embedder_dim"]) if "embedder_dim" in meta else None,
                },
                "current_embedder": self.embedder.name if self.embedder is not None else None,
                "key": self.key,
                "path": str(self.path),
                "db_bytes": self._db.size_bytes(),
                "index": self._vectors.stats(db_seq),
            }
