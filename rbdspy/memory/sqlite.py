"""The store's SQLite database: the single source of truth for items and their vectors.

Every item (its MemoryItem JSON) and both of its embedding vectors live in `memory.db`, written in
WAL mode with `synchronous=FULL`, so an item is durable when its transaction commits and several
processes can share one store. Everything else (the FAISS indexes) is derived from this file.

The `changes` log is how derived indexes stay in step: every write that changes what an index
holds (add, remove, re-embed, scope move) appends rows to it in the same transaction.
`changes.seq` is AUTOINCREMENT, so its high-water mark in `sqlite_sequence` is the database's
change counter; it never goes back, even when old log rows are pruned. Row ids (`items.pk`,
AUTOINCREMENT, never reused) are the FAISS ids.

This class knows SQL and bytes, nothing about embedders or FAISS; it is not thread-safe on its
own (MemoryStore holds its lock around every call).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from rbdspy.memory.base_database import KEYS, SCHEMA_VERSION, BaseDatabase, chunks, used_item
from rbdspy.types import MemoryItem

__all__ = ["DB_FILE", "LOG_KEEP", "OP_ADD", "OP_DEL", "OP_SCOPE", "OP_VEC", "Database", "blob"]

logger = logging.getLogger("rbdspy.memory.store")  # reported with the store's messages

DB_FILE = "memory.db"
LOG_KEEP = 100_000  # change-log entries kept for incremental catch-up; older ones are pruned on flush

# Change-log operations. `add`, `del` and `vec` change what an index holds for a row; `scope`
# only changes the row's scope (the scope id cache), nothing in FAISS.
OP_ADD, OP_DEL, OP_VEC, OP_SCOPE = "add", "del", "vec", "scope"

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


_EPISODES = """CREATE TABLE IF NOT EXISTS episodes (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    task TEXT NOT NULL,
    outcome INTEGER,
    items TEXT NOT NULL
)"""


def placeholders(n: int) -> str:
    return ",".join("?" * n)


def blob(vector: np.ndarray) -> bytes:
    """A vector as stored: little-endian float32 bytes."""
    return np.ascontiguousarray(vector, dtype="<f4").tobytes()


def _vec_column(key: str) -> str:
    if key not in KEYS:  # never interpolate anything else into SQL
        raise ValueError(f"Unknown vector key {key!r}.")
    return f"{key}_vec"


class Database(BaseDatabase):
    """The SQLite file of one store: connection, schema, meta, transactions, change log, rows."""

    def __init__(self, directory: Path):
        self.path = directory / DB_FILE
        self.where, self.bank = self.path, directory
        self.invalid_ids: set[str] = set()  # rows seen not to validate (each reported once)
        self.conn = self._connect()
        try:
            self.meta = self._init_schema()
        except BaseException:
            self.conn.close()
            raise

    # ------------------------------------------------------------------ connection and schema

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
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
            raise sqlite3.OperationalError(f"Could not switch {self.path} to WAL mode (database busy).")
        if str(mode).lower() != "wal":
            logger.warning("SQLite journal mode is %s, not WAL; concurrent readers may block writers.", mode)
        conn.execute("PRAGMA synchronous = FULL")
        return conn

    def _init_schema(self) -> dict[str, str]:
        try:  # an existing store: open without taking the write lock
            meta = dict(self.conn.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.OperationalError:
            meta = {}
        if "db_uuid" not in meta:
            meta = self._create_schema()
        if meta.get("schema_version") != SCHEMA_VERSION:
            raise ValueError(
                f"{self.path} has schema version {meta.get('schema_version')!r}; this rbdspy reads "
                f"version {SCHEMA_VERSION}. Export it with the rbdspy that wrote it and import the JSONL here."
            )
        return meta

    def _create_schema(self) -> dict[str, str]:
        with self.write_tx() as conn:
            for statement in filter(None, (s.strip() for s in _SCHEMA.split(";"))):  # executescript would COMMIT
                conn.execute(statement)
            conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)", (SCHEMA_VERSION,))
            conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('db_uuid', ?)", (uuid.uuid4().hex,))
            return dict(conn.execute("SELECT key, value FROM meta").fetchall())

    def close(self) -> None:
        self.conn.close()

    def checkpoint(self) -> None:
        """Fold the write-ahead log into memory.db (and empty it), so the file alone holds every
        committed item: a copy of the bank without its -wal file then loses nothing."""
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

    def size_bytes(self) -> int:
        """The database file's size with its WAL and shared-memory files."""
        return sum(p.stat().st_size for p in self.path.parent.glob(f"{DB_FILE}*") if p.is_file())

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold a lock that other processes' `exclusive()` on this bank wait for: an flock on
        memory.db, which SQLite's own (POSIX) locks never touch."""
        try:
            import fcntl  # optional: POSIX only
        except ImportError:  # no flock (Windows): the store's thread lock is all there is
            yield
            return
        with open(self.path, "rb") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    # ------------------------------------------------------------------ meta

    def read_meta(self) -> dict[str, str]:
        self.meta = dict(self.conn.execute("SELECT key, value FROM meta").fetchall())
        return self.meta

    def set_meta(self, key: str, value: str) -> None:
        """Inside a write transaction: record a meta value that is not yet set."""
        self.conn.execute("INSERT INTO meta(key, value) VALUES (?, ?)", (key, value))

    def put_meta(self, key: str, value: str) -> None:
        """Set a meta value (new or replaced) in its own durable transaction."""
        with self.write_tx():
            self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))
        self.meta[key] = value

    def meta_value(self, key: str) -> str | None:
        """A meta value as the database holds it now (another process may have changed it)."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row is not None else None

    # ------------------------------------------------------------------ transactions

    @contextmanager
    def write_tx(self) -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction: takes the database's write lock up front (waiting up to the
        busy timeout for another writer), commits durably or rolls back."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    @contextmanager
    def read_tx(self) -> Iterator[sqlite3.Connection]:
        """A read snapshot: the change counter, the log and the rows read inside agree."""
        if self.conn.in_transaction:
            yield self.conn
            return
        self.conn.execute("BEGIN")
        try:
            yield self.conn
        finally:
            if self.conn.in_transaction:
                self.conn.execute("COMMIT")

    # ------------------------------------------------------------------ change log

    def change_seq(self) -> int:
        """The change counter: the last `changes.seq` ever handed out."""
        row = self.conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'changes'").fetchone()
        return int(row[0]) if row else 0

    def items_seq(self) -> int:
        """The last `items.pk` ever handed out."""
        row = self.conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'items'").fetchone()
        return int(row[0]) if row else 0

    def log(self, entries: Sequence[tuple[str, int]]) -> None:
        """Inside a write transaction: append (op, row) entries to the change log."""
        self.conn.executemany("INSERT INTO changes(op, row) VALUES (?, ?)", entries)

    def first_logged_seq(self) -> int | None:
        return self.conn.execute("SELECT min(seq) FROM changes").fetchone()[0]

    def changes(self, after: int, upto: int) -> list[tuple[str, int]]:
        return self.conn.execute(
            "SELECT op, row FROM changes WHERE seq > ? AND seq <= ? ORDER BY seq", (after, upto)
        ).fetchall()

    def prune_log(self, keep: int) -> None:
        """Drop change-log entries more than `keep` changes old (an index that far behind is
        rebuilt rather than caught up); takes the write lock only when there is something to drop."""
        first = self.first_logged_seq()
        if first is None or first > self.change_seq() - keep:
            return
        with self.write_tx() as conn:
            conn.execute("DELETE FROM changes WHERE seq <= ?", (self.change_seq() - keep,))

    # ------------------------------------------------------------------ rows

    def insert_items(self, pks: Sequence[int], items: Sequence[MemoryItem], task: np.ndarray, own: np.ndarray) -> None:
        """Inside a write transaction: item i as row pks[i], with vectors task[i] and own[i].
        An id already stored raises ValueError naming it (the caller's transaction rolls back)."""
        rows = [
            (pk, item.id, item.scope, item.source, item.model_dump_json(), blob(task[i]), blob(own[i]))
            for i, (pk, item) in enumerate(zip(pks, items, strict=True))
        ]
        try:
            self.conn.executemany(
                "INSERT INTO items(pk, id, scope, source, data, task_vec, item_vec) VALUES (?, ?, ?, ?, ?, ?, ?)", rows
            )
        except sqlite3.IntegrityError as exc:
            raise self.duplicate_ids_error(items) from exc

    def existing_ids(self, ids: Sequence[str]) -> list[str]:
        found: list[str] = []
        for chunk in chunks(list(ids)):
            found += [
                r[0] for r in self.conn.execute(f"SELECT id FROM items WHERE id IN ({placeholders(len(chunk))})", chunk)
            ]
        return found

    def items_by_pk(self, pks: Sequence[int]) -> dict[int, MemoryItem]:
        found: dict[int, MemoryItem] = {}
        for chunk in chunks(list(pks)):
            rows = self.conn.execute(
                f"SELECT pk, id, data FROM items WHERE pk IN ({placeholders(len(chunk))})", chunk
            ).fetchall()
            found.update((pk, item) for pk, id, data in rows if (item := self.parse(id, data)) is not None)
        return found

    def all_pks(self) -> np.ndarray:
        return np.fromiter((r[0] for r in self.conn.execute("SELECT pk FROM items ORDER BY pk")), dtype=np.int64)

    def scope_pks(self, scope: str | None) -> np.ndarray:
        """Sorted row ids of one scope (None: the items without a scope)."""
        if scope is None:
            rows = self.conn.execute("SELECT pk FROM items WHERE scope IS NULL").fetchall()
        else:
            rows = self.conn.execute("SELECT pk FROM items WHERE scope = ?", (scope,)).fetchall()
        return np.sort(np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows)))

    def item(self, id: str) -> MemoryItem | None:
        row = self.conn.execute("SELECT data FROM items WHERE id = ?", (id,)).fetchone()
        return self.parsed_or_raise(id, row)

    def items(self, limit: int | None = None, scope: str | None = None, unscoped: bool = False) -> list[MemoryItem]:
        """Items in insertion order: all, one `scope`'s, or (unscoped=True) those without one."""
        sql, params = "SELECT id, data FROM items", []
        if unscoped:
            sql += " WHERE scope IS NULL"
        elif scope is not None:
            sql += " WHERE scope = ?"
            params.append(scope)
        sql += " ORDER BY pk"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        rows = self.conn.execute(sql, params).fetchall()
        return [item for id, data in rows if (item := self.parse(id, data)) is not None]

    def ids(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT id FROM items ORDER BY pk")]

    def item_lines(self) -> Iterator[str]:
        """Every item's JSON, in insertion order."""
        return (data for (data,) in self.conn.execute("SELECT data FROM items ORDER BY pk"))

    def count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM items").fetchone()[0])

    def contains(self, id: str) -> bool:
        return self.conn.execute("SELECT 1 FROM items WHERE id = ?", (id,)).fetchone() is not None

    def counts(self) -> tuple[dict[str, int], dict[str | None, int]]:
        """Item counts by source and by scope."""
        by_source = dict(
            self.conn.execute("SELECT source, count(*) FROM items GROUP BY source ORDER BY source").fetchall()
        )
        by_scope = dict(self.conn.execute("SELECT scope, count(*) FROM items GROUP BY scope ORDER BY scope").fetchall())
        return by_source, by_scope

    def find(self, id: str) -> tuple[int, str | None, MemoryItem | None] | None:
        """(pk, scope, item) of the item with this id (item None when its row does not validate),
        or None."""
        row = self.conn.execute("SELECT pk, scope, data FROM items WHERE id = ?", (id,)).fetchone()
        return (row[0], row[1], self.parse(id, row[2])) if row is not None else None

    def update_item(self, pk: int, item: MemoryItem, vectors: dict[str, np.ndarray]) -> None:
        """Inside a write transaction: rewrite row `pk` from `item`, and the given key's vectors."""
        sets, params = ["scope = ?", "source = ?", "data = ?"], [item.scope, item.source, item.model_dump_json()]
        for key, vector in vectors.items():
            sets.append(f"{_vec_column(key)} = ?")
            params.append(blob(vector))
        self.conn.execute(f"UPDATE items SET {', '.join(sets)} WHERE pk = ?", (*params, pk))

    def delete_ids(self, ids: Sequence[str]) -> list[tuple[int, str | None]]:
        """Inside a write transaction: delete the items with these ids; their (pk, scope)."""
        found: list[tuple[int, str | None]] = []
        for chunk in chunks(list(dict.fromkeys(ids))):
            found += self.conn.execute(
                f"SELECT pk, scope FROM items WHERE id IN ({placeholders(len(chunk))})", chunk
            ).fetchall()
        for chunk in chunks([pk for pk, _ in found]):
            self.conn.execute(f"DELETE FROM items WHERE pk IN ({placeholders(len(chunk))})", chunk)
        return found

    def mark_used(self, ids: Sequence[str], now: datetime, outcome: bool | None = None) -> list[MemoryItem]:
        """Inside a write transaction: use_count + 1 and last_used_at = now for each (unique) id,
        and, with a decided `outcome`, one more success or failure and the value it teaches.
        Returns the items as updated."""
        return self._update_items(ids, lambda item: used_item(item, now, outcome))

    def set_retired(self, ids: Sequence[str], retired: bool) -> list[MemoryItem]:
        """Inside a write transaction: retire (or restore) each id that is not already so."""
        return self._update_items(
            ids, lambda item: item.model_copy(update={"retired": retired}) if item.retired != retired else None
        )

    def _update_items(self, ids: Sequence[str], change: Callable[[MemoryItem], MemoryItem | None]) -> list[MemoryItem]:
        """Rewrites the JSON of each item `change` returns a new version of (None: unchanged).
        Fields outside the vectors only: the indexes are not touched."""
        updated: list[tuple[int, MemoryItem]] = []
        for chunk in chunks(list(ids)):
            for pk, id, data in self.conn.execute(
                f"SELECT pk, id, data FROM items WHERE id IN ({placeholders(len(chunk))})", chunk
            ):
                old = self.parse(id, data)
                new = change(old) if old is not None else None
                if new is not None:
                    updated.append((pk, new))
        self.conn.executemany(
            "UPDATE items SET data = ? WHERE pk = ?", [(i.model_dump_json(), pk) for pk, i in updated]
        )
        return [item for _, item in updated]

    # ------------------------------------------------------------------ episodes (served items and outcomes)

    def record_episode(self, task: str, outcome: bool | None, ids: Sequence[str], now: datetime) -> None:
        """Inside a write transaction: one task, the items served for it and how it ended. The
        table is created on first use, so stores written before it existed gain it then."""
        self.conn.execute(_EPISODES)
        self.conn.execute(
            "INSERT INTO episodes(at, task, outcome, items) VALUES (?, ?, ?, ?)",
            (now.isoformat(), task, None if outcome is None else int(outcome), json.dumps(list(ids))),
        )

    def base_rate(self) -> tuple[int, int]:
        """(decided tasks recorded, successes among them)."""
        try:
            decided, wins = self.conn.execute(
                "SELECT COUNT(outcome), COALESCE(SUM(outcome), 0) FROM episodes"
            ).fetchone()
        except sqlite3.OperationalError:  # no task recorded yet: the table does not exist
            return 0, 0
        return int(decided), int(wins)

    def episodes(self, limit: int | None = None) -> list[dict[str, Any]]:
        """The recorded tasks, oldest first (at most the last `limit`)."""
        try:
            rows = self.conn.execute(
                "SELECT seq, at, task, outcome, items FROM episodes ORDER BY seq DESC LIMIT ?",
                (-1 if limit is None else limit,),
            ).fetchall()
        except sqlite3.OperationalError:
            return []
        return [
            {"seq": seq, "at": at, "task": task, "outcome": None if o is None else bool(o), "items": json.loads(items)}
            for seq, at, task, o, items in reversed(rows)
        ]

    # ------------------------------------------------------------------ vectors

    def vectors_of(self, pks: Sequence[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(pks, task vectors, item vectors) of the rows among `pks` that exist, in pk order."""
        found: list[tuple[int, bytes, bytes]] = []
        for chunk in chunks(sorted(pks)):
            found += self.conn.execute(
                f"SELECT pk, task_vec, item_vec FROM items WHERE pk IN ({placeholders(len(chunk))}) ORDER BY pk", chunk
            ).fetchall()
        return self._unpack(found)

    def embedded_batches(self, size: int) -> Iterator[tuple[list[MemoryItem], np.ndarray, np.ndarray]]:
        """(items, task vectors, item vectors) of every valid row in pk order, `size` rows at a time."""
        cursor = self.conn.execute("SELECT id, data, task_vec, item_vec FROM items ORDER BY pk")
        while rows := cursor.fetchmany(size):
            kept = [(item, t, o) for id, data, t, o in rows if (item := self.parse(id, data)) is not None]
            if kept:
                dim = self._dim()
                yield (
                    [item for item, _, _ in kept],
                    np.frombuffer(b"".join(t for _, t, _ in kept), dtype="<f4").reshape(len(kept), dim),
                    np.frombuffer(b"".join(o for _, _, o in kept), dtype="<f4").reshape(len(kept), dim),
                )

    def iter_vectors(self, batch: int = 10_000) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Every row's (pks, task vectors, item vectors), in pk order, `batch` rows at a time."""
        cursor = self.conn.execute("SELECT pk, task_vec, item_vec FROM items ORDER BY pk")
        while rows := cursor.fetchmany(batch):
            yield self._unpack(rows)

    def key_vectors(self, key: str, pks: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """(pks, vectors) under one key for the rows among `pks` that exist (any order)."""
        column = _vec_column(key)
        found: list[tuple[int, bytes]] = []
        for chunk in chunks(list(pks)):
            found += self.conn.execute(
                f"SELECT pk, {column} FROM items WHERE pk IN ({placeholders(len(chunk))})", chunk
            ).fetchall()
        dim = self._dim()
        ids = np.fromiter((r[0] for r in found), dtype=np.int64, count=len(found))
        return ids, np.frombuffer(b"".join(r[1] for r in found), dtype="<f4").reshape(len(found), dim)

    def _dim(self) -> int:
        dim = self.recorded_dim()
        assert dim is not None, "vectors read before any was written"
        return dim

    def _unpack(self, rows: Sequence[tuple[int, bytes, bytes]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        dim = self._dim() if rows else (self.recorded_dim() or 0)
        pks = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        task = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), dim)
        own = np.frombuffer(b"".join(r[2] for r in rows), dtype="<f4").reshape(len(rows), dim)
        return pks, task, own
