"""The store's two FAISS indexes (task vectors, item vectors): derived data, kept in step with SQLite.

The indexes are rebuilt or caught up from the database whenever they are missing, unreadable or
behind, and saved next to it only on `flush()`/`close()`:

- A store applies its own writes to the indexes right after they commit, when the indexes were
  exactly at the change counter the write started from; otherwise it leaves them behind.
- Before each read the indexes are brought to the database's change counter: the new `changes`
  log entries are replayed, reading the current vectors from SQLite. If the log no longer reaches
  back that far, or the indexes may be inconsistent (an exception part-way through an update),
  only a rebuild from SQLite will do.
- An index file records the database's uuid, the counter it reflects and a CRC of its payload; a
  file that is missing, corrupt, from another database, of another format or stale is caught up
  or rebuilt, and a loaded index is checked against the database's ids before it is trusted.

The indexes hold float16 copies of the vectors (half the bytes to scan); searches re-score their
candidates from the float32 vectors in SQLite, so results are exact (see exact_search).
Not thread-safe on its own: MemoryStore holds its lock around every call.
"""

from __future__ import annotations

import logging
import sqlite3
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from rbdspy.memory.base_database import KEYS
from rbdspy.memory.exact_search import (
    exact_scores,
    is_scan_index,
    new_scan_index,
    scoped_search,
    search_window,
    search_with_ties,
)
from rbdspy.memory.index_file import read_index_file, remove_orphan_temps, write_index_file
from rbdspy.memory.inputs import UNSCOPED, check_scope
from rbdspy.memory.sqlite import OP_ADD, OP_SCOPE, Database

__all__ = ["VectorIndex"]

logger = logging.getLogger("rbdspy.memory.store")  # reported with the store's messages

_SCOPE_CACHE_MAX = 64
INDEX_TOKEN = "index_token"  # meta key: which saved index files belong to this database's history


class VectorIndex:
    """The pair of FAISS indexes of one store, and what they reflect of its database."""

    def __init__(self, db: Database, directory: Path):
        self.db = db
        self.directory = directory
        self.indexes: dict[str, faiss.Index] | None = None
        self.synced_seq = -1  # the change counter the in-memory indexes reflect
        self.max_pk = 0  # every pk that can be in the indexes is <= this
        self.dirty = False  # indexes may be inconsistent: rebuild before the next read
        self.persisted_seq: int | None = None  # the counter the saved files reflect, when known
        self._scope_cache: OrderedDict[Any, tuple[np.ndarray, Any, Any]] = OrderedDict()
        remove_orphan_temps(directory)

    def stats(self, db_seq: int) -> dict[str, Any]:
        """Whether the indexes are loaded and in step with `db_seq`, and the saved files' sizes."""
        return {
            "loaded": self.indexes is not None,
            "db_seq": db_seq,
            "synced_seq": self.synced_seq if self.indexes is not None else None,
            "in_sync": self.indexes is not None and not self.dirty and self.synced_seq == db_seq,
            "persisted_seq": self.persisted_seq,
            "file_bytes": {key: p.stat().st_size for key, p in self.paths().items() if p.exists()},
        }

    def unload(self) -> None:
        self.indexes = None
        self._scope_cache.clear()

    # ------------------------------------------------------------------ applying this store's writes

    def after_write(
        self, seq_before: int, seq_after: int, apply: Callable[[], None], scopes: Iterable[str | None]
    ) -> None:
        """After a commit: apply our own change when the indexes were exactly at `seq_before`;
        otherwise leave them behind, and the next read catches up from the log."""
        if self.indexes is None or self.dirty or seq_before != self.synced_seq:
            self._scope_cache.clear()
            return
        try:
            apply()
        except BaseException:
            self.dirty = True  # part-applied: rebuild from SQLite before the next read
            raise
        self.synced_seq = seq_after
        for scope in scopes:
            self._scope_cache.pop(UNSCOPED if scope is None else scope, None)

    def add(self, pks: np.ndarray, task: np.ndarray, own: np.ndarray) -> None:
        assert self.indexes is not None
        self.indexes["task"].add_with_ids(task, pks)
        self.indexes["item"].add_with_ids(own, pks)
        self.max_pk = max(self.max_pk, int(pks.max()))

    def remove(self, pks: Sequence[int]) -> None:
        assert self.indexes is not None
        ids = np.asarray(pks, dtype=np.int64)
        for index in self.indexes.values():
            index.remove_ids(ids)

    def replace(self, pk: int, vectors: dict[str, np.ndarray]) -> None:
        assert self.indexes is not None
        ids = np.asarray([pk], dtype=np.int64)
        for key, vector in vectors.items():
            self.indexes[key].remove_ids(ids)
            self.indexes[key].add_with_ids(vector.reshape(1, -1), ids)

    # ------------------------------------------------------------------ keeping in step

    def try_sync(self, db_seq: int) -> bool:
        """Bring the indexes to `db_seq` by loading the saved files and/or replaying the log.
        False when only a rebuild can (the caller rebuilds). Call inside a read transaction."""
        if self.indexes is None:
            return self._load(db_seq)
        if self.dirty or db_seq < self.synced_seq:
            return False
        return db_seq == self.synced_seq or self._catch_up(db_seq)

    def rebuild(self, db_seq: int) -> None:
        """Rebuild both indexes from SQLite (the truth), at the read snapshot's counter."""
        dim = self.db.recorded_dim()
        self._scope_cache.clear()
        if dim is None:  # nothing was ever written
            self.indexes, self.synced_seq, self.dirty = None, db_seq, False
            return
        indexes = {key: new_scan_index(dim) for key in KEYS}
        for pks, task, own in self.db.iter_vectors():
            indexes["task"].add_with_ids(task, pks)
            indexes["item"].add_with_ids(own, pks)
        self.indexes = indexes
        self.max_pk = self.db.items_seq()
        self.synced_seq = db_seq
        self.persisted_seq = None  # whatever the files hold, save these on the next flush
        self.dirty = False

    def _catch_up(self, db_seq: int) -> bool:
        """Replay the change log from our counter to `db_seq`, reading current vectors from SQLite."""
        first = self.db.first_logged_seq()
        if first is None or first > self.synced_seq + 1:
            logger.info("Change log no longer reaches seq %s; rebuilding the index from SQLite.", self.synced_seq)
            return False
        rows: set[int] = set()
        remove: set[int] = set()
        for op, row in self.db.changes(self.synced_seq, db_seq):
            if op == OP_SCOPE:
                continue
            rows.add(row)
            if op != OP_ADD or row <= self.max_pk:  # an add above max_pk cannot be in the index yet
                remove.add(row)
        if remove:
            self.remove(sorted(remove))
        if rows:
            pks, task, own = self.db.vectors_of(sorted(rows))
            if len(pks):
                self.add(pks, task, own)
            self.max_pk = max(self.max_pk, max(rows))
        self.synced_seq = db_seq
        self._scope_cache.clear()
        return True

    def _load(self, db_seq: int) -> bool:
        """First read after open: load the saved indexes if they are this database's and not
        ahead of it, catch them up from the log and check them against SQLite."""
        dim = self.db.recorded_dim()
        if dim is None:
            return False
        loaded = {key: self.read_file(key) for key in KEYS}
        headers = [header for _, header in filter(None, loaded.values())]
        token = self.db.meta_value(INDEX_TOKEN)
        usable = (
            len(headers) == len(KEYS)
            and all(h["db_uuid"] == self.db.uuid and h["dim"] == dim and h.get("token") == token for h in headers)
            and len({h["seq"] for h in headers}) == 1
            and headers[0]["seq"] <= db_seq
        )
        if not usable:
            if any(path.exists() for path in self.paths().values()):
                logger.info(
                    "Saved index files in %s are missing, unreadable or from another state; rebuilding.", self.directory
                )
            return False
        self.indexes = {key: loaded[key][0] for key in KEYS}  # type: ignore[index]
        self.synced_seq = self.persisted_seq = headers[0]["seq"]
        self.max_pk = headers[0]["max_pk"]
        self.dirty = False
        self._scope_cache.clear()
        if db_seq > self.synced_seq and not self._catch_up(db_seq):
            return False
        if not self._matches_db():
            logger.warning("Saved index in %s disagrees with the database; rebuilding from SQLite.", self.directory)
            return False
        return True

    def _matches_db(self) -> bool:
        assert self.indexes is not None
        pks = self.db.all_pks()
        for index in self.indexes.values():
            ids = np.sort(faiss.vector_to_array(index.id_map))
            if ids.shape != pks.shape or not np.array_equal(ids, pks):
                return False
        return True

    # ------------------------------------------------------------------ files

    def paths(self) -> dict[str, Path]:
        return {key: self.directory / f"index.{key}.faiss" for key in KEYS}

    def read_file(self, key: str) -> tuple[faiss.Index, dict[str, Any]] | None:
        """The saved index for `key` and its header, or None when missing or not valid."""
        path = self.paths()[key]
        loaded = read_index_file(path)
        if loaded is None:
            return None
        index, header = loaded
        if header.get("key") != key or not isinstance(index, faiss.IndexIDMap2):
            logger.warning("Ignoring index file %s: it is not this store's %r index.", path, key)
            return None
        if not is_scan_index(index):
            logger.info("Index file %s is in an older format (not float16 codes); it will be rebuilt.", path)
            return None
        return loaded

    def save(self) -> None:
        """Write both index files, unless they already reflect the in-memory indexes."""
        if self.indexes is None or self.persisted_seq == self.synced_seq:
            return
        # The database learns first which files belong to its history: a memory.db restored from a
        # backup, or rolled back, holds an older token (or none) and so never trusts these files,
        # even though its uuid matches and its row ids are reused for other items.
        token = uuid.uuid4().hex
        try:
            self.db.put_meta(INDEX_TOKEN, token)
        except sqlite3.OperationalError as exc:  # a read-only database: the next open rebuilds
            logger.info("Not saving index files in %s: %s", self.directory, exc)
            return
        common = {
            "token": token,
            "db_uuid": self.db.uuid,
            "seq": self.synced_seq,
            "max_pk": self.max_pk,
            "embedder": self.db.meta.get("embedder_name"),
        }
        for key in KEYS:
            write_index_file(self.paths()[key], self.indexes[key], {"key": key, **common})
        self.persisted_seq = self.synced_seq

    # ------------------------------------------------------------------ search

    def search(self, query: np.ndarray, k: int, key: str, scope: Any) -> list[tuple[int, float]]:
        """The exact top-k (row id, cosine) for the unit `query` (shape (1, dim)), best first, ties
        in row-id order; `scope` (a str, UNSCOPED, or None for all) applies before the top-k.
        Call in step (try_sync/rebuild) and inside the read transaction that fetches the items."""
        if self.indexes is None:
            return []
        index = self.indexes[key]
        if index.ntotal == 0:
            return []
        if scope is None:
            members, params = None, None
            available = index.ntotal
        else:
            members, _selector, params = self._scope_members(scope)
            available = len(members)
            if available == 0:
                return []
        top = min(k, available)
        if not query.any():  # every exact score is 0.0: insertion order decides
            pool = np.sort(faiss.vector_to_array(index.id_map)) if members is None else members
            return [(int(pk), 0.0) for pk in pool[:top]]

        def rescore(pks: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
            ids, vectors = self.db.key_vectors(key, pks)
            return ids, exact_scores(vectors, query[0])

        window = search_window(index.d)
        if members is None:
            return search_with_ties(index, query, top, available, window, rescore)
        return scoped_search(index, query, top, members, params, window, rescore)

    def _scope_members(self, scope: Any) -> tuple[np.ndarray, Any, Any]:
        """The scope's sorted row ids and a FAISS selector over them (cached until the scope changes)."""
        check_scope(scope)
        cached = self._scope_cache.get(scope)
        if cached is not None:
            self._scope_cache.move_to_end(scope)
            return cached
        members = self.db.scope_pks(None if scope is UNSCOPED else scope)
        selector = faiss.IDSelectorBatch(members) if len(members) else None
        params = faiss.SearchParameters(sel=selector) if selector is not None else None
        entry = (members, selector, params)  # the selector must outlive the params that point to it
        self._scope_cache[scope] = entry
        while len(self._scope_cache) > _SCOPE_CACHE_MAX:
            self._scope_cache.popitem(last=False)
        return entry
