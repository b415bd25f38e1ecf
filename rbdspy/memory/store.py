"""MemoryStore: the persistent bank of memory items, searchable by embedding.

SQLite is the single source of truth: every item (its MemoryItem JSON) and both of its embedding
vectors live in `memory.db`, written in WAL mode with `synchronous=FULL`, so an item is durable
when `add` returns and several processes can share one store. The two FAISS indexes (one over the
items' task texts, the paper's query-to-query retrieval, one over the items' own texts) are derived
data: rebuilt or caught up from SQLite whenever they are missing, unreadable or behind, and saved
next to the database only on `flush()`/`close()`.

How the indexes stay in step with the database:

- Every write that changes what an index holds (add, remove, an update that re-embeds, an update
  that moves an item to another scope) appends rows to the `changes` log in the same transaction.
  `changes.seq` is AUTOINCREMENT, so its high-water mark in `sqlite_sequence` is the database's
  change counter; it never goes back, even when old log rows are pruned.
- A store remembers the counter its in-memory indexes reflect. Each search reads the counter
  (one indexed lookup, inside the read transaction that also fetches the results); when another
  process or connection wrote since, the store replays just the new log entries, reading the
  current vectors from SQLite. If the log no longer reaches back that far, or the indexes may be
  inconsistent (an exception part-way through an index update), it rebuilds from SQLite instead.
- An index file records the database's uuid, the counter it reflects and a CRC of its payload;
  on open, a file that is missing, corrupt, from another database or stale is caught up or
  rebuilt, and a loaded index is checked against the database's ids before it is trusted.

Row ids (`items.pk`, AUTOINCREMENT, never reused) are the FAISS ids.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

import faiss
import numpy as np
from pydantic import ValidationError

from rbdspy.memory.embedders import Embedder, _CallableEmbedder, as_embedder
from rbdspy.memory.exact_search import scoped_search, search_with_ties
from rbdspy.memory.index_file import read_index_file, write_index_file
from rbdspy.types import MemoryItem

__all__ = ["MemoryStore", "UNSCOPED", "KEYS"]

logger = logging.getLogger(__name__)

Key = Literal["task", "item"]
KEYS: tuple[str, ...] = ("task", "item")

DB_FILE = "memory.db"
SCHEMA_VERSION = "1"
LOG_KEEP = 100_000  # change-log entries kept for incremental catch-up; older ones are pruned on flush
_SQL_CHUNK = 900  # ids per `IN (...)` query
_SCOPE_CACHE_MAX = 64


class _Unscoped:
    """Sentinel scope: only the items whose scope is None (scope=None in `search` means all)."""

    _instance: _Unscoped | None = None

    def __new__(cls) -> _Unscoped:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNSCOPED"

    def __reduce__(self) -> str:
        return "UNSCOPED"


UNSCOPED = _Unscoped()

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS items (
    pk INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    scope TEXT,
    source TEXT NOT NULL,
    data TEXT NOT NULL,
    task_vec BLOB NOT NULL,
    item_vec BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS items_scope ON items(scope);
CREATE TABLE IF NOT EXISTS changes (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    op TEXT NOT NULL,
    row INTEGER NOT NULL
);
"""

# Change-log operations. `add`, `del` and `vec` change what an index holds for a row; `scope`
# only changes the row's scope (the scope id cache), nothing in FAISS.
_OP_ADD, _OP_DEL, _OP_VEC, _OP_SCOPE = "add", "del", "vec", "scope"


def _chunks(seq: Sequence[Any], size: int = _SQL_CHUNK) -> Iterator[Sequence[Any]]:
    for start in range(0, len(seq), size):
        yield seq[start : start + size]


def _placeholders(n: int) -> str:
    return ",".join("?" * n)


def _normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    out = np.ascontiguousarray(vectors, dtype=np.float32).copy()
    np.divide(out, norms, out=out, where=norms > 0)
    return out


def _blob(vector: np.ndarray) -> bytes:
    return np.ascontiguousarray(vector, dtype="<f4").tobytes()


def _new_index(dim: int) -> faiss.Index:
    return faiss.IndexIDMap2(faiss.IndexFlatIP(dim))


class MemoryStore:
    """A directory holding memory items (SQLite) and their two FAISS indexes.

    `key` picks which vector `search` uses unless a call overrides it: "task" (default) matches
    the query against the task each item was learned on, as the paper does; "item" matches it
    against the item's own text. All methods are thread-safe; several processes may open the
    same path. Use it as a context manager, or call `close()`, so the indexes are saved and the
    next open does not have to rebuild them.
    """

    UNSCOPED = UNSCOPED

    def __init__(self, path: str | os.PathLike[str], embedder: Any = None, key: Key = "task"):
        if key not in KEYS:
            raise ValueError(f"MemoryStore key must be 'task' or 'item', got {key!r}.")
        self.path = Path(path)
        if self.path.exists() and not self.path.is_dir():
            raise ValueError(f"MemoryStore path must be a directory; {self.path} is a file.")
        self.path.mkdir(parents=True, exist_ok=True)
        self.key: str = key
        self.embedder: Embedder | None = as_embedder(embedder) if embedder is not None else None
        self._lock = threading.RLock()
        self._closed = False
        self._indexes: dict[str, faiss.Index] | None = None
        self._synced_seq = -1  # the change counter the in-memory indexes reflect
        self._max_pk = 0  # every pk that can be in the indexes is <= this
        self._dirty = False  # indexes may be inconsistent: rebuild before the next read
        self._persisted_seq: int | None = None
        self._scope_cache: OrderedDict[Any, tuple[np.ndarray, Any, Any]] = OrderedDict()
        self._conn = self._connect()
        try:
            self._meta = self._init_schema()
            self._check_embedder_at_open()
        except BaseException:
            self._conn.close()
            raise

    # ------------------------------------------------------------------ connection and meta

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path / DB_FILE, timeout=30.0, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA busy_timeout = 30000")
        for attempt in range(50):  # switching a fresh file to WAL needs a moment of exclusive access
            try:
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                time.sleep(0.05 * (attempt + 1))
        else:
            raise sqlite3.OperationalError(f"Could not switch {self.path / DB_FILE} to WAL mode (database busy).")
        if str(mode).lower() != "wal":
            logger.warning("SQLite journal mode is %s, not WAL; concurrent readers may block writers.", mode)
        conn.execute("PRAGMA synchronous = FULL")
        return conn

    def _init_schema(self) -> dict[str, str]:
        try:  # an existing store: open without taking the write lock
            meta = dict(self._conn.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.OperationalError:
            meta = {}
        if "db_uuid" not in meta:
            meta = self._create_schema()
        if meta.get("schema_version") != SCHEMA_VERSION:
            raise ValueError(
                f"{self.path / DB_FILE} has schema version {meta.get('schema_version')!r}; this rbdspy reads "
                f"version {SCHEMA_VERSION}. Export it with the rbdspy that wrote it and import the JSONL here."
            )
        return meta

    def _create_schema(self) -> dict[str, str]:
        with self._lock, self._write_tx() as conn:
            for statement in filter(None, (s.strip() for s in _SCHEMA.split(";"))):  # executescript would COMMIT
                conn.execute(statement)
            conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)", (SCHEMA_VERSION,))
            conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('db_uuid', ?)", (uuid.uuid4().hex,))
            return dict(conn.execute("SELECT key, value FROM meta").fetchall())

    def _read_meta(self) -> dict[str, str]:
        self._meta = dict(self._conn.execute("SELECT key, value FROM meta").fetchall())
        return self._meta

    @property
    def _db_uuid(self) -> str:
        return self._meta["db_uuid"]

    def _recorded_dim(self) -> int | None:
        if "embedder_dim" not in self._meta:  # another process may have made the first write
            with self._lock:
                self._check_open()
                self._read_meta()
        value = self._meta.get("embedder_dim")
        return int(value) if value is not None else None

    def _mismatch_error(self, recorded_name: str | None, recorded_dim: int | None, name: str | None, dim: int | None) -> ValueError:
        return ValueError(
            f"The memory store at {self.path} was built with embedder {recorded_name or '(unnamed)'!r} "
            f"(dim {recorded_dim}), but it is being used with embedder {name or '(none)'!r} (dim {dim}). "
            f"Open it with the same embedder, or move the items to a new store to re-embed them: "
            f"old.export_jsonl('bank.jsonl') then MemoryStore(new_path, embedder=...).import_jsonl('bank.jsonl')."
        )

    def _check_embedder_at_open(self) -> None:
        if self.embedder is None:
            return
        name = self.embedder.name
        dim = self._embedder_dim_if_known()
        recorded_name = self._meta.get("embedder_name")
        recorded_dim = self._recorded_dim()
        if (recorded_name is not None and recorded_name != name) or (
            recorded_dim is not None and dim is not None and recorded_dim != dim
        ):
            raise self._mismatch_error(recorded_name, recorded_dim, name, dim)

    def _embedder_dim_if_known(self) -> int | None:
        if self.embedder is None:
            return None
        if isinstance(self.embedder, _CallableEmbedder):
            return self.embedder._dim  # do not make a probe call just to compare
        return int(self.embedder.dim)

    def _record_embedding_meta(self, dim: int, with_embedder: bool) -> None:
        """Inside a write transaction: record the embedder's name and dim on first write, and
        refuse vectors of another dim or from another embedder than the recorded ones."""
        meta = self._read_meta()
        recorded_dim = int(meta["embedder_dim"]) if "embedder_dim" in meta else None
        recorded_name = meta.get("embedder_name")
        name = self.embedder.name if (with_embedder and self.embedder is not None) else None
        if (recorded_dim is not None and recorded_dim != dim) or (
            name is not None and recorded_name is not None and recorded_name != name
        ):
            raise self._mismatch_error(recorded_name, recorded_dim, name or recorded_name, dim)
        if recorded_dim is None:
            self._conn.execute("INSERT INTO meta(key, value) VALUES ('embedder_dim', ?)", (str(dim),))
        if name is not None and recorded_name is None:
            self._conn.execute("INSERT INTO meta(key, value) VALUES ('embedder_name', ?)", (name,))
        if recorded_dim is None or (name is not None and recorded_name is None):
            self._read_meta()

    @contextmanager
    def _write_tx(self) -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction: takes the database's write lock up front (waiting up to the
        busy timeout for another writer), commits durably or rolls back."""
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield self._conn
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    @contextmanager
    def _read_tx(self) -> Iterator[sqlite3.Connection]:
        """A read snapshot: the change counter, the log and the rows read inside agree."""
        if self._conn.in_transaction:
            yield self._conn
            return
        self._conn.execute("BEGIN")
        try:
            yield self._conn
        finally:
            if self._conn.in_transaction:
                self._conn.execute("COMMIT")

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"This MemoryStore ({self.path}) is closed; open a new MemoryStore on the path.")

    def _db_seq(self) -> int:
        row = self._conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'changes'").fetchone()
        return int(row[0]) if row else 0

    def _items_seq(self) -> int:
        row = self._conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'items'").fetchone()
        return int(row[0]) if row else 0

    # ------------------------------------------------------------------ embedding

    def _require_embedder(self, action: str) -> Embedder:
        if self.embedder is None:
            raise RuntimeError(
                f"This MemoryStore has no embedder, which {action} needs: open it with "
                f"MemoryStore(path, embedder=...), e.g. rbdspy.memory.HashEmbedder() or rbdspy.make_embedder('local'). "
                f"list/get/stats/export/remove, add_embedded and search_vector work without one."
            )
        return self.embedder

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """The store embedder's L2-normalised float32 vectors for `texts`, shape (n, dim)."""
        embedder = self._require_embedder("embedding")
        texts = list(texts)
        if not texts:
            return np.zeros((0, self._recorded_dim() or self._embedder_dim_if_known() or 0), dtype=np.float32)
        raw = np.asarray(embedder(texts), dtype=np.float32)
        if raw.ndim == 1 and len(texts) == 1:
            raw = raw.reshape(1, -1)
        if raw.ndim != 2 or raw.shape[0] != len(texts):
            raise ValueError(f"Embedder {embedder.name!r} returned shape {raw.shape} for {len(texts)} texts; expected ({len(texts)}, dim).")
        recorded = self._recorded_dim()
        if recorded is not None and raw.shape[1] != recorded:
            raise self._mismatch_error(self._meta.get("embedder_name"), recorded, embedder.name, raw.shape[1])
        if not np.isfinite(raw).all():
            raise ValueError(f"Embedder {embedder.name!r} returned non-finite values (NaN or inf).")
        return _normalise(raw)

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

    # ------------------------------------------------------------------ writes

    def add(self, items: MemoryItem | Iterable[MemoryItem]) -> list[str]:
        """Store new items (one embedder call, one transaction). Returns their ids.
        An id already in the store, or repeated in `items`, raises ValueError and stores nothing."""
        batch = _as_items(items)
        if not batch:
            return []
        self._require_embedder("add")
        _check_unique_ids(batch)
        task_vectors, item_vectors = self.embed_items(batch)
        return self._insert(batch, task_vectors, item_vectors, with_embedder=True)

    def add_embedded(self, items: MemoryItem | Iterable[MemoryItem], task_vectors: Any, item_vectors: Any) -> list[str]:
        """Store new items with vectors the caller computed (row i belongs to item i), e.g. a
        benchmark or a migration that embeds elsewhere. Vectors are L2-normalised here."""
        batch = _as_items(items)
        if not batch:
            return []
        _check_unique_ids(batch)
        task = _as_matrix(task_vectors, len(batch), "task_vectors")
        own = _as_matrix(item_vectors, len(batch), "item_vectors")
        if task.shape[1] != own.shape[1]:
            raise ValueError(f"task_vectors have dim {task.shape[1]} but item_vectors have dim {own.shape[1]}.")
        return self._insert(batch, _normalise(task), _normalise(own), with_embedder=False)

    def _insert(self, batch: list[MemoryItem], task: np.ndarray, own: np.ndarray, with_embedder: bool) -> list[str]:
        ids = [item.id for item in batch]
        dim = int(task.shape[1])
        with self._lock:
            self._check_open()
            with self._write_tx() as conn:
                self._record_embedding_meta(dim, with_embedder)
                seq_before = self._db_seq()
                first = self._items_seq() + 1
                pks = list(range(first, first + len(batch)))
                rows = [
                    (pk, item.id, item.scope, item.source, item.model_dump_json(), _blob(task[i]), _blob(own[i]))
                    for i, (pk, item) in enumerate(zip(pks, batch))
                ]
                try:
                    conn.executemany(
                        "INSERT INTO items(pk, id, scope, source, data, task_vec, item_vec) VALUES (?, ?, ?, ?, ?, ?, ?)", rows
                    )
                except sqlite3.IntegrityError as exc:
                    existing = self._existing_ids(ids)
                    raise ValueError(
                        f"Memory item id(s) already in the store: {existing[:5]}{' ...' if len(existing) > 5 else ''}. "
                        f"Use update(item) to change an item, or give new items new ids."
                    ) from exc
                conn.executemany("INSERT INTO changes(op, row) VALUES (?, ?)", [(_OP_ADD, pk) for pk in pks])
                seq_after = self._db_seq()
            scopes = {item.scope for item in batch}
            self._after_write(seq_before, seq_after, lambda: self._index_add(np.asarray(pks, dtype=np.int64), task, own), scopes)
        return ids

    def update(self, item: MemoryItem) -> MemoryItem:
        """Replace the stored fields of the item with `item.id` (KeyError if absent). Its vectors
        are recomputed only when its task text or own text changed; its row (FAISS id) is kept."""
        if not isinstance(item, MemoryItem):
            raise TypeError(f"update() takes a MemoryItem, got {type(item).__name__}.")
        new_texts = {key: item.key_text(key) for key in KEYS}  # type: ignore[arg-type]
        vectors: dict[str, np.ndarray] = {}
        for _attempt in range(5):
            with self._lock:
                self._check_open()
                with self._write_tx() as conn:
                    row = conn.execute("SELECT pk, scope, data FROM items WHERE id = ?", (item.id,)).fetchone()
                    if row is None:
                        raise KeyError(f"No memory item with id {item.id!r} in {self.path}; use add() for new items.")
                    pk, old_scope, old_data = row
                    old = MemoryItem.model_validate_json(old_data)
                    changed = [key for key in KEYS if old.key_text(key) != new_texts[key]]  # type: ignore[arg-type]
                    missing = [key for key in changed if key not in vectors]
                    if not missing:
                        seq_before = self._db_seq()
                        sets, params = ["scope = ?", "source = ?", "data = ?"], [item.scope, item.source, item.model_dump_json()]
                        for key in changed:
                            sets.append(f"{key}_vec = ?")
                            params.append(_blob(vectors[key]))
                        conn.execute(f"UPDATE items SET {', '.join(sets)} WHERE pk = ?", (*params, pk))
                        ops = ([(_OP_VEC, pk)] if changed else []) + ([(_OP_SCOPE, pk)] if old_scope != item.scope else [])
                        conn.executemany("INSERT INTO changes(op, row) VALUES (?, ?)", ops)
                        seq_after = self._db_seq()
                if not missing:
                    new_vectors = {key: vectors[key] for key in changed}
                    self._after_write(seq_before, seq_after, lambda: self._index_replace(pk, new_vectors), {old_scope, item.scope})
                    return item
            # Embed outside the lock and the write transaction (a model call can be slow), then retry.
            self._require_embedder("update (the item's text changed, so it is re-embedded)")
            embedded = self.embed([new_texts[key] for key in missing])
            vectors.update({key: embedded[i] for i, key in enumerate(missing)})
        raise RuntimeError(f"update({item.id!r}) kept racing with concurrent updates of the same item; try again.")

    def remove(self, ids: str | Iterable[str]) -> int:
        """Delete items by id. Returns how many were removed; unknown ids are ignored."""
        id_list = [ids] if isinstance(ids, str) else [str(i) for i in ids]
        if not id_list:
            return 0
        with self._lock:
            self._check_open()
            with self._write_tx() as conn:
                seq_before = self._db_seq()
                found: list[tuple[int, str | None]] = []
                for chunk in _chunks(list(dict.fromkeys(id_list))):
                    found += conn.execute(f"SELECT pk, scope FROM items WHERE id IN ({_placeholders(len(chunk))})", chunk).fetchall()
                pks = [pk for pk, _ in found]
                for chunk in _chunks(pks):
                    conn.execute(f"DELETE FROM items WHERE pk IN ({_placeholders(len(chunk))})", chunk)
                conn.executemany("INSERT INTO changes(op, row) VALUES (?, ?)", [(_OP_DEL, pk) for pk in pks])
                seq_after = self._db_seq()
            if pks:
                self._after_write(seq_before, seq_after, lambda: self._index_remove(pks), {scope for _, scope in found})
        return len(pks)

    def mark_used(self, ids: str | Iterable[str]) -> int:
        """Count one use of each item (use_count + 1, last_used_at = now), durably. Unknown ids
        (e.g. removed meanwhile) are ignored; returns how many items were marked."""
        id_list = list(dict.fromkeys([ids] if isinstance(ids, str) else [str(i) for i in ids]))
        if not id_list:
            return 0
        now = datetime.now(timezone.utc)
        with self._lock:
            self._check_open()
            with self._write_tx() as conn:
                updates = []
                for chunk in _chunks(id_list):
                    for pk, data in conn.execute(f"SELECT pk, data FROM items WHERE id IN ({_placeholders(len(chunk))})", chunk):
                        item = MemoryItem.model_validate_json(data)
                        used = item.model_copy(update={"use_count": item.use_count + 1, "last_used_at": now})
                        updates.append((used.model_dump_json(), pk))
                conn.executemany("UPDATE items SET data = ? WHERE pk = ?", updates)
        return len(updates)

    # ------------------------------------------------------------------ reads

    def get(self, id: str) -> MemoryItem:
        """The item with this id; KeyError naming the id when there is none."""
        with self._lock:
            self._check_open()
            row = self._conn.execute("SELECT data FROM items WHERE id = ?", (id,)).fetchone()
        if row is None:
            raise KeyError(f"No memory item with id {id!r} in {self.path}.")
        return MemoryItem.model_validate_json(row[0])

    def list(self, scope: Any = None, limit: int | None = None) -> list[MemoryItem]:
        """Items in insertion order; `scope` restricts to one scope (UNSCOPED: items without one)."""
        if limit is not None and (not isinstance(limit, int) or limit < 0):
            raise ValueError(f"limit must be a non-negative int or None, got {limit!r}.")
        sql, params = "SELECT data FROM items", []
        if scope is UNSCOPED:
            sql += " WHERE scope IS NULL"
        elif scope is not None:
            sql += " WHERE scope = ?"
            params.append(scope)
        sql += " ORDER BY pk"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        with self._lock:
            self._check_open()
            rows = self._conn.execute(sql, params).fetchall()
        return [MemoryItem.model_validate_json(data) for (data,) in rows]

    def __len__(self) -> int:
        with self._lock:
            self._check_open()
            return int(self._conn.execute("SELECT count(*) FROM items").fetchone()[0])

    def __contains__(self, id: object) -> bool:
        if not isinstance(id, str):
            return False
        with self._lock:
            self._check_open()
            return self._conn.execute("SELECT 1 FROM items WHERE id = ?", (id,)).fetchone() is not None

    def search(self, query: str, k: int = 1, scope: Any = None, key: Key | None = None) -> list[tuple[MemoryItem, float]]:
        """The k items most similar to `query` (cosine), best first, as (item, score).

        `scope` restricts the search to one scope before the top-k is taken (so k items of that
        scope come back whenever it has k); None searches every item; UNSCOPED only items without
        a scope. `key` overrides the store's default ("task" or "item").
        """
        if not isinstance(query, str) or not query.strip():
            raise ValueError("search() needs a non-empty query string.")
        _check_k(k)
        vector = self.embed([query])[0]
        return self.search_vector(vector, k=k, scope=scope, key=key)

    def search_vector(self, vector: Any, k: int = 1, scope: Any = None, key: Key | None = None) -> list[tuple[MemoryItem, float]]:
        """`search` for a caller that has its own query vector (same embedder, any norm)."""
        _check_k(k)
        key = self._resolve_key(key)
        query = _as_matrix(vector, 1, "vector")
        with self._lock:
            self._check_open()
            recorded = self._recorded_dim()
            if recorded is not None and query.shape[1] != recorded:
                raise ValueError(f"Query vector has dim {query.shape[1]}, but this store's vectors have dim {recorded}.")
            query = _normalise(query)
            with self._read_tx():
                self._sync()
                if self._indexes is None:
                    return []
                index = self._indexes[key]
                if index.ntotal == 0:
                    return []
                if scope is None:
                    hits = search_with_ties(index, query, min(k, index.ntotal), index.ntotal)
                else:
                    members, _selector, params = self._scope_members(scope)
                    if len(members) == 0:
                        return []
                    hits = scoped_search(index, query, min(k, len(members)), members, params)
                items = self._items_by_pk([pk for pk, _ in hits])
        return [(items[pk], score) for pk, score in hits if pk in items]

    def _resolve_key(self, key: str | None) -> str:
        if key is None:
            return self.key
        if key not in KEYS:
            raise ValueError(f"key must be 'task', 'item' or None (the store's default {self.key!r}), got {key!r}.")
        return key

    def _items_by_pk(self, pks: Sequence[int]) -> dict[int, MemoryItem]:
        if not pks:
            return {}
        rows = self._conn.execute(f"SELECT pk, data FROM items WHERE pk IN ({_placeholders(len(pks))})", list(pks)).fetchall()
        return {pk: MemoryItem.model_validate_json(data) for pk, data in rows}

    def _existing_ids(self, ids: Sequence[str]) -> list[str]:
        found: list[str] = []
        for chunk in _chunks(list(ids)):
            found += [r[0] for r in self._conn.execute(f"SELECT id FROM items WHERE id IN ({_placeholders(len(chunk))})", chunk)]
        return found

    def _scope_members(self, scope: Any) -> tuple[np.ndarray, Any, Any]:
        """The scope's row ids and a FAISS selector over them (cached until the scope changes)."""
        if scope is not UNSCOPED and not isinstance(scope, str):
            raise TypeError(f"scope must be a str, None (all items) or MemoryStore.UNSCOPED, got {type(scope).__name__}.")
        cached = self._scope_cache.get(scope)
        if cached is not None:
            self._scope_cache.move_to_end(scope)
            return cached
        if scope is UNSCOPED:
            rows = self._conn.execute("SELECT pk FROM items WHERE scope IS NULL").fetchall()
        else:
            rows = self._conn.execute("SELECT pk FROM items WHERE scope = ?", (scope,)).fetchall()
        members = np.sort(np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows)))
        selector = faiss.IDSelectorBatch(members) if len(members) else None
        params = faiss.SearchParameters(sel=selector) if selector is not None else None
        entry = (members, selector, params)  # the selector must outlive the params that point to it
        self._scope_cache[scope] = entry
        while len(self._scope_cache) > _SCOPE_CACHE_MAX:
            self._scope_cache.popitem(last=False)
        return entry

    def _forget_scopes(self, scopes: Iterable[str | None]) -> None:
        for scope in scopes:
            self._scope_cache.pop(UNSCOPED if scope is None else scope, None)

    # ------------------------------------------------------------------ keeping FAISS in step

    def _after_write(self, seq_before: int, seq_after: int, apply: Any, scopes: Iterable[str | None]) -> None:
        """After a commit: apply our own change to the in-memory indexes when they were exactly
        at `seq_before`; otherwise leave them behind, and the next read catches up from the log."""
        if self._indexes is None or self._dirty or seq_before != self._synced_seq:
            self._scope_cache.clear()
            return
        try:
            apply()
        except BaseException:
            self._dirty = True  # part-applied: rebuild from SQLite before the next read
            raise
        self._synced_seq = seq_after
        self._forget_scopes(scopes)

    def _index_add(self, pks: np.ndarray, task: np.ndarray, own: np.ndarray) -> None:
        assert self._indexes is not None
        self._indexes["task"].add_with_ids(task, pks)
        self._indexes["item"].add_with_ids(own, pks)
        self._max_pk = max(self._max_pk, int(pks.max()))

    def _index_remove(self, pks: Sequence[int]) -> None:
        assert self._indexes is not None
        ids = np.asarray(pks, dtype=np.int64)
        for index in self._indexes.values():
            index.remove_ids(ids)

    def _index_replace(self, pk: int, vectors: dict[str, np.ndarray]) -> None:
        assert self._indexes is not None
        ids = np.asarray([pk], dtype=np.int64)
        for key, vector in vectors.items():
            self._indexes[key].remove_ids(ids)
            self._indexes[key].add_with_ids(vector.reshape(1, -1), ids)

    def _sync(self) -> None:
        """Bring the in-memory indexes to the database's current change counter. Call with the
        lock held, inside a read transaction."""
        db_seq = self._db_seq()
        try:
            if self._indexes is None:
                self._load_or_build(db_seq)
            elif self._dirty or db_seq < self._synced_seq:
                self._rebuild(db_seq)
            elif db_seq > self._synced_seq:
                self._catch_up(db_seq)
        except BaseException:
            self._dirty = True
            raise

    def _catch_up(self, db_seq: int) -> None:
        """Replay the change log from our counter to `db_seq`, reading current vectors from SQLite."""
        first = self._conn.execute("SELECT min(seq) FROM changes").fetchone()[0]
        if first is None or first > self._synced_seq + 1:
            logger.info("Change log no longer reaches seq %s; rebuilding the index from SQLite.", self._synced_seq)
            self._rebuild(db_seq)
            return
        assert self._indexes is not None
        log = self._conn.execute(
            "SELECT op, row FROM changes WHERE seq > ? AND seq <= ? ORDER BY seq", (self._synced_seq, db_seq)
        ).fetchall()
        rows: set[int] = set()
        remove: set[int] = set()
        for op, row in log:
            if op == _OP_SCOPE:
                continue
            rows.add(row)
            if op != _OP_ADD or row <= self._max_pk:  # an add above max_pk cannot be in the index yet
                remove.add(row)
        if remove:
            self._index_remove(sorted(remove))
        if rows:
            ordered = sorted(rows)
            found: list[tuple[int, bytes, bytes]] = []
            for chunk in _chunks(ordered):
                found += self._conn.execute(
                    f"SELECT pk, task_vec, item_vec FROM items WHERE pk IN ({_placeholders(len(chunk))}) ORDER BY pk", chunk
                ).fetchall()
            if found:
                pks, task, own = self._unpack_rows(found)
                self._indexes["task"].add_with_ids(task, pks)
                self._indexes["item"].add_with_ids(own, pks)
            self._max_pk = max(self._max_pk, ordered[-1])
        self._synced_seq = db_seq
        self._scope_cache.clear()

    def _unpack_rows(self, rows: Sequence[tuple[int, bytes, bytes]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        dim = self._recorded_dim()
        assert dim is not None
        pks = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        task = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), dim)
        own = np.frombuffer(b"".join(r[2] for r in rows), dtype="<f4").reshape(len(rows), dim)
        return pks, task, own

    def _rebuild(self, db_seq: int) -> None:
        """Rebuild both indexes from SQLite (the truth), at the read snapshot's counter."""
        dim = self._recorded_dim()
        self._scope_cache.clear()
        if dim is None:  # nothing was ever written
            self._indexes, self._synced_seq, self._dirty = None, db_seq, False
            return
        indexes = {key: _new_index(dim) for key in KEYS}
        cursor = self._conn.execute("SELECT pk, task_vec, item_vec FROM items ORDER BY pk")
        while batch := cursor.fetchmany(10_000):
            pks, task, own = self._unpack_rows(batch)
            indexes["task"].add_with_ids(task, pks)
            indexes["item"].add_with_ids(own, pks)
        self._indexes = indexes
        self._max_pk = self._items_seq()
        self._synced_seq = db_seq
        self._dirty = False

    def _load_or_build(self, db_seq: int) -> None:
        """First read after open: load the saved indexes if they are this database's and not
        ahead of it, catch them up from the log, check them against SQLite; else rebuild."""
        dim = self._recorded_dim()
        if dim is None:
            self._rebuild(db_seq)
            return
        loaded = {key: self._read_index_file(key) for key in KEYS}
        headers = [header for _, header in filter(None, loaded.values())]
        usable = (
            len(headers) == len(KEYS)
            and all(h["db_uuid"] == self._db_uuid and h["dim"] == dim for h in headers)
            and len({h["seq"] for h in headers}) == 1
            and headers[0]["seq"] <= db_seq
        )
        if not usable:
            if any(path.exists() for path in self._index_paths().values()):
                logger.info("Saved index files in %s are missing, unreadable or from another state; rebuilding.", self.path)
            self._rebuild(db_seq)
            return
        self._indexes = {key: loaded[key][0] for key in KEYS}  # type: ignore[index]
        self._synced_seq = self._persisted_seq = headers[0]["seq"]
        self._max_pk = headers[0]["max_pk"]
        self._dirty = False
        if db_seq > self._synced_seq:
            self._catch_up(db_seq)
        if not self._indexes_match_db():
            logger.warning("Saved index in %s disagrees with the database; rebuilding from SQLite.", self.path)
            self._rebuild(db_seq)

    def _indexes_match_db(self) -> bool:
        if self._indexes is None:
            return False
        pks = np.fromiter((r[0] for r in self._conn.execute("SELECT pk FROM items ORDER BY pk")), dtype=np.int64)
        for index in self._indexes.values():
            ids = np.sort(faiss.vector_to_array(index.id_map))
            if ids.shape != pks.shape or not np.array_equal(ids, pks):
                return False
        return True

    # ------------------------------------------------------------------ index files

    def _index_paths(self) -> dict[str, Path]:
        return {key: self.path / f"index.{key}.faiss" for key in KEYS}

    def _read_index_file(self, key: str) -> tuple[faiss.Index, dict[str, Any]] | None:
        """The saved index for `key` and its header, or None when missing or not valid."""
        loaded = read_index_file(self._index_paths()[key])
        if loaded is not None and (loaded[1].get("key") != key or not isinstance(loaded[0], faiss.IndexIDMap2)):
            logger.warning("Ignoring index file %s: it is not this store's %r index.", self._index_paths()[key], key)
            return None
        return loaded

    def _write_index_file(self, key: str, index: faiss.Index, seq: int) -> None:
        header = {"key": key, "db_uuid": self._db_uuid, "seq": seq, "max_pk": self._max_pk, "embedder": self._meta.get("embedder_name")}
        write_index_file(self._index_paths()[key], index, header)

    def flush(self) -> None:
        """Save both indexes (if they changed since last saved) and prune the change log.
        Items are already durable; this only spares the next open a catch-up or rebuild."""
        with self._lock:
            self._check_open()
            if self._indexes is None and not self._dirty:
                self._prune_log()  # never searched here: nothing to save, the next open catches up
                return
            with self._read_tx():
                self._sync()
                seq = self._synced_seq
            if self._indexes is not None and self._persisted_seq != seq:
                for key in KEYS:
                    self._write_index_file(key, self._indexes[key], seq)
                self._persisted_seq = seq
            self._prune_log()

    def _prune_log(self) -> None:
        """Drop change-log entries more than LOG_KEEP changes old (an index that far behind is
        rebuilt rather than caught up); takes the write lock only when there is something to drop."""
        first = self._conn.execute("SELECT min(seq) FROM changes").fetchone()[0]
        if first is None or first > self._db_seq() - LOG_KEEP:
            return
        with self._write_tx() as conn:
            conn.execute("DELETE FROM changes WHERE seq <= ?", (self._db_seq() - LOG_KEEP,))

    def close(self) -> None:
        """Save the indexes and close the database. Idempotent."""
        with self._lock:
            if self._closed:
                return
            try:
                self.flush()
            finally:
                self._closed = True
                self._indexes = None
                self._scope_cache.clear()
                self._conn.close()

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ JSONL and stats

    def export_jsonl(self, path: str | os.PathLike[str]) -> int:
        """Write every item, in insertion order, as one MemoryItem JSON object per line (no
        vectors: importing re-embeds). Returns the number of items written."""
        target = Path(path)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        count = 0
        with self._lock:
            self._check_open()
            with self._read_tx(), open(tmp, "w", encoding="utf-8") as f:
                for (data,) in self._conn.execute("SELECT data FROM items ORDER BY pk"):
                    f.write(data)
                    f.write("\n")
                    count += 1
        os.replace(tmp, target)
        return count

    def import_jsonl(self, path: str | os.PathLike[str], on_conflict: Literal["skip", "error"] = "skip", batch_size: int = 256) -> int:
        """Add the items of a JSONL export, re-embedding them with this store's embedder.

        The whole file is validated first (a malformed line raises ValueError naming its line
        number, and nothing is imported). Items whose id is already stored, or repeated in the
        file, are skipped (on_conflict="skip", logged with their count) or raise ValueError
        (on_conflict="error"). Returns the number of items added.
        """
        if on_conflict not in ("skip", "error"):
            raise ValueError(f"on_conflict must be 'skip' or 'error', got {on_conflict!r}.")
        self._require_embedder("import_jsonl (items are re-embedded)")
        items: list[MemoryItem] = []
        with open(path, encoding="utf-8-sig") as f:
            for line_number, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    items.append(MemoryItem.model_validate_json(line))
                except (ValidationError, ValueError) as exc:
                    raise ValueError(f"{path}, line {line_number}: not a valid MemoryItem JSON object: {_short_error(exc)}") from exc
        seen: set[str] = set()
        fresh: list[MemoryItem] = []
        repeated: list[str] = []
        with self._lock:
            self._check_open()
            existing = set(self._existing_ids([item.id for item in items]))
        for item in items:
            if item.id in existing or item.id in seen:
                repeated.append(item.id)
            else:
                seen.add(item.id)
                fresh.append(item)
        if repeated and on_conflict == "error":
            raise ValueError(
                f"{path}: {len(repeated)} item id(s) already in the store or repeated in the file, e.g. {repeated[:3]}; "
                f"use on_conflict='skip' to skip them."
            )
        for start in range(0, len(fresh), batch_size):
            self.add(fresh[start : start + batch_size])
        if repeated:
            logger.info("import_jsonl(%s): skipped %d item(s) whose id is already stored.", path, len(repeated))
        return len(fresh)

    def stats(self) -> dict[str, Any]:
        """Counts by source and scope, the recorded embedder, the files' sizes and whether the
        in-memory indexes are in step with the database."""
        with self._lock:
            self._check_open()
            with self._read_tx() as conn:
                count = int(conn.execute("SELECT count(*) FROM items").fetchone()[0])
                by_source = dict(conn.execute("SELECT source, count(*) FROM items GROUP BY source ORDER BY source").fetchall())
                by_scope = dict(conn.execute("SELECT scope, count(*) FROM items GROUP BY scope ORDER BY scope").fetchall())
                db_seq = self._db_seq()
                meta = self._read_meta()
            db_bytes = sum(p.stat().st_size for p in self.path.glob(f"{DB_FILE}*") if p.is_file())
            index_files = {key: p.stat().st_size for key, p in self._index_paths().items() if p.exists()}
            return {
                "count": count,
                "by_source": by_source,
                "by_scope": by_scope,
                "embedder": {"name": meta.get("embedder_name"), "dim": int(meta["embedder_dim"]) if "embedder_dim" in meta else None},
                "current_embedder": self.embedder.name if self.embedder is not None else None,
                "key": self.key,
                "path": str(self.path),
                "db_bytes": db_bytes,
                "index": {
                    "loaded": self._indexes is not None,
                    "db_seq": db_seq,
                    "synced_seq": self._synced_seq if self._indexes is not None else None,
                    "in_sync": self._indexes is not None and not self._dirty and self._synced_seq == db_seq,
                    "persisted_seq": self._persisted_seq,
                    "file_bytes": index_files,
                },
            }

    # ------------------------------------------------------------------ a live handle, never copied

    def __deepcopy__(self, memo: dict[int, Any]) -> MemoryStore:
        # DSPy optimizers deep-copy the program once per candidate; all copies share this store.
        return self

    def __copy__(self) -> MemoryStore:
        return self

    def __getstate__(self) -> Any:
        raise TypeError(
            "A MemoryStore is a live handle on a database and is never pickled; the program saves only its "
            "prompts (bank.save), and the store persists itself at its path: reopen it with MemoryStore(path)."
        )

    def __repr__(self) -> str:
        embedder = self.embedder.name if self.embedder is not None else None
        return f"MemoryStore({str(self.path)!r}, embedder={embedder!r}, key={self.key!r})"


# ---------------------------------------------------------------------- input checks


def _as_items(items: MemoryItem | Iterable[MemoryItem]) -> list[MemoryItem]:
    batch = [items] if isinstance(items, MemoryItem) else list(items)
    for i, item in enumerate(batch):
        if not isinstance(item, MemoryItem):
            raise TypeError(
                f"items[{i}] is a {type(item).__name__}, not a MemoryItem; build one with "
                f"MemoryItem(title=..., description=..., content=...) or MemoryItem.from_lesson(lesson)."
            )
    return batch


def _check_unique_ids(batch: Sequence[MemoryItem]) -> None:
    seen: set[str] = set()
    repeated = [item.id for item in batch if item.id in seen or seen.add(item.id)]  # type: ignore[func-returns-value]
    if repeated:
        raise ValueError(f"Memory item id(s) repeated within one add: {repeated[:5]}.")


def _check_k(k: Any) -> None:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k <= 0:
        raise ValueError(f"k must be a positive int, got {k!r}.")


def _as_matrix(vectors: Any, n: int, name: str) -> np.ndarray:
    array = np.asarray(vectors, dtype=np.float32)
    if array.ndim == 1 and n == 1:
        array = array.reshape(1, -1)
    if array.ndim != 2 or array.shape[0] != n or array.shape[1] == 0:
        raise ValueError(f"{name} must have shape ({n}, dim), got {array.shape}.")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} contains NaN or infinite values.")
    return array


def _short_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "(root)"
        return f"{where}: {first.get('msg')} ({exc.error_count()} error(s))"
    return str(exc)
