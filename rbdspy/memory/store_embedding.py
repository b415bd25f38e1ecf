"""A store's embedder, and its compatibility with the vectors the store already holds.

A store records the name and dim of the embedder that wrote its first vectors (in the database's
meta) and refuses to mix in vectors from another: cosines between two embedders' spaces are
meaningless, and a wrong-dim vector would corrupt the index. Every refusal says how to move the
items to a store with the new embedder (export, then import, which re-embeds).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rbdspy.memory.base_database import KEYS
from rbdspy.memory.embedders import Embedder, as_embedder, as_rows, known_dim
from rbdspy.memory.inputs import normalise
from rbdspy.memory.postgres import PgDatabase
from rbdspy.memory.sqlite import Database
from rbdspy.types import MemoryItem

__all__ = ["StoreEmbedding"]


class StoreEmbedding:
    """The embedder of the store at `path` (or None), checked against `db`'s recorded one.

    `recorded_dim` returns the recorded dim, re-reading the meta when it is missing (another
    process may have made the first write); the store passes one that takes its lock.
    """

    def __init__(
        self, embedder: Any, path: Path | str, db: Database | PgDatabase, recorded_dim: Callable[[], int | None]
    ):
        self.embedder: Embedder | None = as_embedder(embedder) if embedder is not None else None
        self._path = path
        self._db = db
        self._recorded_dim = recorded_dim

    def mismatch_error(
        self, recorded_name: str | None, recorded_dim: int | None, name: str | None, dim: int | None
    ) -> ValueError:
        return ValueError(
            f"The memory store at {self._path} was built with embedder {recorded_name or '(unnamed)'!r} "
            f"(dim {recorded_dim}), but it is being used with embedder {name or '(none)'!r} (dim {dim}). "
            f"Open it with the same embedder, or move the items to a new store to re-embed them: "
            f"old.export_jsonl('bank.jsonl') then MemoryStore(new_path, embedder=...).import_jsonl('bank.jsonl')."
        )

    def check_at_open(self) -> None:
        if self.embedder is None:
            return
        name, dim = self.embedder.name, self.dim_if_known()
        recorded_name, recorded_dim = self._db.meta.get("embedder_name"), self._recorded_dim()
        if (recorded_name is not None and recorded_name != name) or (
            recorded_dim is not None and dim is not None and recorded_dim != dim
        ):
            raise self.mismatch_error(recorded_name, recorded_dim, name, dim)

    def dim_if_known(self) -> int | None:
        # known_dim: no probe call just to compare
        return known_dim(self.embedder) if self.embedder is not None else None

    def record_meta(self, dim: int, with_embedder: bool, name: str | None = None) -> None:
        """Inside a write transaction: record the embedder's name and dim on first write, and
        refuse vectors of another dim or from another embedder than the recorded ones. `name`
        names the embedder of vectors computed elsewhere (a migration copies them)."""
        meta = self._db.read_meta()
        recorded_dim = int(meta["embedder_dim"]) if "embedder_dim" in meta else None
        recorded_name = meta.get("embedder_name")
        if with_embedder and self.embedder is not None:
            name = self.embedder.name
        if (recorded_dim is not None and recorded_dim != dim) or (
            name is not None and recorded_name is not None and recorded_name != name
        ):
            raise self.mismatch_error(recorded_name, recorded_dim, name or recorded_name, dim)
        if recorded_dim is None:
            self._db.set_meta("embedder_dim", str(dim))
        if name is not None and recorded_name is None:
            self._db.set_meta("embedder_name", name)
        if recorded_dim is None or (name is not None and recorded_name is None):
            self._db.read_meta()

    def require(self, action: str) -> Embedder:
        if self.embedder is None:
            raise RuntimeError(
                f"This MemoryStore has no embedder, which {action} needs: open it with "
                f"MemoryStore(path, embedder=...), e.g. rbdspy.memory.HashEmbedder() or rbdspy.make_embedder('local'). "
                f"list/get/stats/export/remove, add_embedded and search_vector work without one."
            )
        return self.embedder

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """The embedder's L2-normalised float32 vectors for `texts`, shape (n, dim)."""
        embedder = self.require("embedding")
        texts = list(texts)
        if not texts:
            return np.zeros((0, self._recorded_dim() or self.dim_if_known() or 0), dtype=np.float32)
        raw = as_rows(embedder(texts), len(texts), embedder.name)
        recorded = self._recorded_dim()
        if recorded is not None and raw.shape[1] != recorded:
            raise self.mismatch_error(self._db.meta.get("embedder_name"), recorded, embedder.name, raw.shape[1])
        if not np.isfinite(raw).all():
            raise ValueError(f"Embedder {embedder.name!r} returned non-finite values (NaN or inf).")
        return normalise(raw)

    def embed_items(self, items: Sequence[MemoryItem]) -> tuple[np.ndarray, np.ndarray]:
        """(task vectors, item vectors) of `items` in one embedder call; identical texts (an item
        with no task has the same text under both keys) are embedded once."""
        texts: list[str] = []
        position: dict[str, int] = {}
        for item in items:
            for key in KEYS:
                text = item.key_text(key)  # type: ignore[arg-type]
                if text not in position:
                    position[text] = len(texts)
                    texts.append(text)
        vectors = self.embed(texts)
        task = vectors[[position[item.key_text("task")] for item in items]]
        own = vectors[[position[item.key_text("item")] for item in items]]
        return task, own
