"""The PostgreSQL backend of MemoryStore: one bank on a database server, shared by many agents.

`MemoryStore("postgresql://user@host/db", embedder=..., namespace="team-a")` keeps every item in
PostgreSQL (the source of truth) with its two vectors in pgvector columns, and searches there:
nothing is derived on the client, so any number of processes on any number of machines see the
same bank at once. This module is the two halves MemoryStore composes, with the same methods as
the SQLite ones (sqlite.py, vector_index.py):

- `PgDatabase`: rows, meta, transactions, episodes. Tables are `rbdspy_meta`, `rbdspy_items` and
  `rbdspy_episodes` in the connection's schema (pick another with `?options=-csearch_path%3Dname`
  in the URL). One embedder per database: the meta is shared by every namespace, so every vector
  lives in one space and a store opened without a namespace can search them all.
- `PgVectors`: search in SQL (`search.py` in this package decides exact or HNSW).

Tenancy: a store opened with a namespace filters every statement by it and writes only into it;
an id names one item per namespace. A store opened without one reads every namespace and writes
to the namespace "default".

Concurrency: each write transaction holds a PostgreSQL advisory lock of its namespace (writers of
one namespace take turns, as they do on SQLite; other namespaces are not blocked), and rows that
are read and rewritten (use counts, values) are locked `FOR UPDATE` besides. `exclusive()` holds
the same lock across several calls, which is what keeps a dedup's search-then-add correct when two
agents learn the same lesson at the same moment.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np

from rbdspy.memory.base_database import SCHEMA_VERSION, BaseDatabase, chunks, used_item
from rbdspy.memory.inputs import UNSCOPED
from rbdspy.types import MemoryItem

__all__ = ["DEFAULT_NAMESPACE", "PgDatabase", "check_namespace", "is_postgres_url", "redacted"]

logger = logging.getLogger("rbdspy.memory.store")

DEFAULT_NAMESPACE = "default"  # where a store opened without a namespace writes
_NAMESPACE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:@/-]{0,127}$")
_SCHEMA_LOCK = "rbdspy:schema"
_META_LOCK = "rbdspy:meta"

_SCHEMA = (
    "CREATE EXTENSION IF NOT EXISTS vector",
    "CREATE TABLE IF NOT EXISTS rbdspy_meta (key text PRIMARY KEY, value text NOT NULL)",
    """CREATE TABLE IF NOT EXISTS rbdspy_items (
        pk bigserial PRIMARY KEY,
        namespace text NOT NULL,
        id text NOT NULL,
        scope text,
        source text NOT NULL,
        data text NOT NULL,
        task_vec vector NOT NULL,
        item_vec vector NOT NULL,
        UNIQUE (namespace, id)
    )""",
    # Vectors stay in the row, uncompressed: a 384-d pair is ~3 KB, over the 2 KB at which
    # PostgreSQL would otherwise move one out of line, and every exact scan would then read it
    # back from the TOAST table, one more lookup per row.
    "ALTER TABLE rbdspy_items SET (toast_tuple_target = 8160)",
    "ALTER TABLE rbdspy_items ALTER COLUMN task_vec SET STORAGE MAIN",
    "ALTER TABLE rbdspy_items ALTER COLUMN item_vec SET STORAGE MAIN",
    "CREATE INDEX IF NOT EXISTS rbdspy_items_scope ON rbdspy_items (namespace, scope)",
    """CREATE TABLE IF NOT EXISTS rbdspy_episodes (
        seq bigserial PRIMARY KEY,
        namespace text NOT NULL,
        at text NOT NULL,
        task text NOT NULL,
        outcome boolean,
        items text NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS rbdspy_episodes_namespace ON rbdspy_episodes (namespace, seq)",
)


def is_postgres_url(path: Any) -> bool:
    return isinstance(path, str) and path.startswith(("postgresql://", "postgres://"))


def redacted(url: str) -> str:
    """The URL without its password: what messages, reprs and pickled references show. The
    password comes from PGPASSWORD or ~/.pgpass, as for every libpq client."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    user = netloc[0].split(":", 1)[0]
    return urlunsplit(parts._replace(netloc=f"{user}@{netloc[1]}"))


def check_namespace(namespace: Any) -> str | None:
    if namespace is None:
        return None
    if not isinstance(namespace, str) or not _NAMESPACE.match(namespace):
        raise ValueError(
            f"namespace must be 1-128 characters of letters, digits and _.:@/- starting with a letter or digit, "
            f"got {namespace!r}."
        )
    return namespace


def lock_key(name: str) -> int:
    """A signed 64-bit advisory-lock key for `name`."""
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "big", signed=True)


def _connect(url: str):
    try:
        import psycopg  # optional: the scale extra (psycopg)
    except ImportError as exc:
        raise ImportError('A postgresql:// bank needs psycopg and pgvector: pip install "rbdspy[scale]"') from exc
    try:
        return psycopg.connect(url, autocommit=True)
    except psycopg.OperationalError as exc:
        raise ConnectionError(
            f"cannot connect to the memory bank at {redacted(url)}: {str(exc).strip().splitlines()[0]}"
        ) from exc


class PgDatabase(BaseDatabase):
    """The tables of one bank on a PostgreSQL server, seen through one namespace (or all)."""

    def __init__(self, url: str, namespace: str | None):
        self.url = url
        self.where = self.bank = redacted(url)
        self.namespace = check_namespace(namespace)
        self.write_namespace = self.namespace or DEFAULT_NAMESPACE
        self.invalid_ids: set[str] = set()
        self._settings: dict[str, str] = {}  # session settings as last set by `setting`
        self._lock_key = lock_key(f"rbdspy:ns:{self.write_namespace}")
        self.conn = _connect(url)
        try:
            self._init_schema()
            self.meta = self.read_meta()
        except BaseException:
            self.conn.close()
            raise

    # ------------------------------------------------------------------ connection and schema

    def _init_schema(self) -> None:
        import psycopg  # optional: the scale extra (psycopg)
        from pgvector.psycopg import register_vector  # optional: the scale extra (pgvector)

        try:
            with self.conn.transaction():
                # Two processes creating the tables at once would collide in the catalogue.
                self.conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key(_SCHEMA_LOCK),))
                exists = self.conn.execute("SELECT to_regclass('rbdspy_meta') IS NOT NULL").fetchone()[0]
                for statement in () if exists else _SCHEMA:  # never re-run: ALTER TABLE locks out readers
                    self.conn.execute(statement)
                self.conn.execute(
                    "INSERT INTO rbdspy_meta(key, value) VALUES ('schema_version', %s), "
                    "('db_uuid', md5(random()::text)) ON CONFLICT (key) DO NOTHING",
                    (SCHEMA_VERSION,),
                )
        except psycopg.errors.FeatureNotSupported as exc:
            raise RuntimeError(f"{self.where}: the pgvector extension is not installed on this server ({exc})") from exc
        except psycopg.errors.InsufficientPrivilege as exc:
            raise RuntimeError(
                f"{self.where}: creating rbdspy's tables (and the pgvector extension) needs more privileges: {exc}. "
                "Ask an administrator to run CREATE EXTENSION vector in this database, or connect as its owner."
            ) from exc
        register_vector(self.conn)
        version = self.conn.execute("SELECT value FROM rbdspy_meta WHERE key = 'schema_version'").fetchone()[0]
        if version != SCHEMA_VERSION:
            raise ValueError(
                f"{self.where} has rbdspy schema version {version!r}; this rbdspy reads version {SCHEMA_VERSION}."
            )

    def close(self) -> None:
        self.conn.close()

    def size_bytes(self) -> int:
        """The items table's size on the server, indexes included (all namespaces)."""
        return int(self.conn.execute("SELECT pg_total_relation_size('rbdspy_items')").fetchone()[0])

    # ------------------------------------------------------------------ meta (shared by every namespace)

    def read_meta(self) -> dict[str, str]:
        self.meta = dict(self.conn.execute("SELECT key, value FROM rbdspy_meta").fetchall())
        return self.meta

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute(
            "INSERT INTO rbdspy_meta(key, value) VALUES (%s, %s) ON CONFLICT (key) DO NOTHING", (key, value)
        )

    def put_meta(self, key: str, value: str) -> None:
        self.conn.execute(
            "INSERT INTO rbdspy_meta(key, value) VALUES (%s, %s) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )
        self.meta[key] = value

    def meta_value(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM rbdspy_meta WHERE key = %s", (key,)).fetchone()
        return row[0] if row is not None else None

    # ------------------------------------------------------------------ transactions and locks

    @contextmanager
    def write_tx(self) -> Iterator[Any]:
        """A transaction holding this namespace's write lock (and, until the bank's embedder is
        recorded, the meta lock, so two first writers cannot record different embedders)."""
        with self.conn.transaction():
            self.conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_key,))
            if "embedder_dim" not in self.meta or "embedder_name" not in self.meta:
                self.conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key(_META_LOCK),))
            yield self.conn

    @contextmanager
    def read_tx(self) -> Iterator[Any]:
        """Reads need no transaction here: each statement sees committed rows, and a row removed
        between a search and the fetch of its items is skipped by the caller."""
        yield self.conn

    def setting(self, name: str, value: str) -> None:
        """Set a session setting (e.g. hnsw.ef_search) unless it already has that value."""
        if self._settings.get(name) != value:
            self.conn.execute("SELECT set_config(%s, %s, false)", (name, value))
            self._settings[name] = value

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold this namespace's write lock across several calls (a session lock; the write
        transactions inside take it again, which the same session may)."""
        self.conn.execute("SELECT pg_advisory_lock(%s)", (self._lock_key,))
        try:
            yield
        finally:
            self.conn.execute("SELECT pg_advisory_unlock(%s)", (self._lock_key,))

    # The change log keeps client-side indexes in step; search runs in the server, so there is none.
    def change_seq(self) -> int:
        return 0

    def items_seq(self) -> int:
        return 0

    def log(self, entries: Sequence[tuple[str, int]]) -> None:
        return None

    def prune_log(self, keep: int) -> None:
        return None

    # ------------------------------------------------------------------ namespace filters

    def scoped(self, *conditions: str, params: Sequence[Any] = ()) -> tuple[str, list[Any]]:
        """A WHERE clause of `conditions` and this store's namespace (none: every namespace)."""
        clauses, values = list(conditions), list(params)
        if self.namespace is not None:
            clauses.append("namespace = %s")
            values.append(self.namespace)
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", values

    def scope_condition(self, scope: Any) -> tuple[list[str], list[Any]]:
        """The condition for one scope: None = any, UNSCOPED = no scope, a str = that scope."""
        if scope is None:
            return [], []
        if scope is UNSCOPED:
            return ["scope IS NULL"], []
        return ["scope = %s"], [scope]

    # ------------------------------------------------------------------ rows

    def insert_items(self, pks: Sequence[int], items: Sequence[MemoryItem], task: np.ndarray, own: np.ndarray) -> None:
        """Inside a write transaction; `pks` are ignored (the server's sequence numbers rows)."""
        import psycopg  # optional: the scale extra (psycopg)

        rows = [
            (self.write_namespace, item.id, item.scope, item.source, item.model_dump_json(), task[i], own[i])
            for i, item in enumerate(items)
        ]
        try:
            with self.conn.cursor() as cursor, self.conn.transaction():
                cursor.executemany(
                    "INSERT INTO rbdspy_items(namespace, id, scope, source, data, task_vec, item_vec) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s)",
                    rows,
                )
        except psycopg.errors.UniqueViolation as exc:
            raise self.duplicate_ids_error(items) from exc

    def existing_ids(self, ids: Sequence[str]) -> list[str]:
        where, params = self.scoped("id = ANY(%s)", params=[list(ids)])
        if self.namespace is None:  # a write from an all-namespace store lands in the default one
            where, params = " WHERE id = ANY(%s) AND namespace = %s", [list(ids), self.write_namespace]
        return [r[0] for r in self.conn.execute(f"SELECT id FROM rbdspy_items{where}", params)]

    def items_by_pk(self, pks: Sequence[int]) -> dict[int, MemoryItem]:
        where, params = self.scoped("pk = ANY(%s)", params=[list(pks)])
        rows = self.conn.execute(f"SELECT pk, id, data FROM rbdspy_items{where}", params).fetchall()
        return {pk: item for pk, id, data in rows if (item := self.parse(id, data)) is not None}

    def item(self, id: str) -> MemoryItem | None:
        where, params = self.scoped("id = %s", params=[id])
        row = self.conn.execute(f"SELECT data FROM rbdspy_items{where} ORDER BY pk LIMIT 1", params).fetchone()
        return self.parsed_or_raise(id, row)

    def items(self, limit: int | None = None, scope: str | None = None, unscoped: bool = False) -> list[MemoryItem]:
        conditions, params = self.scope_condition(UNSCOPED if unscoped else scope)
        where, params = self.scoped(*conditions, params=params)
        sql = f"SELECT id, data FROM rbdspy_items{where} ORDER BY pk"
        if limit is not None:
            sql += " LIMIT %s"
            params.append(limit)
        return [item for id, data in self.conn.execute(sql, params) if (item := self.parse(id, data)) is not None]

    def ids(self) -> list[str]:
        where, params = self.scoped()
        return [r[0] for r in self.conn.execute(f"SELECT id FROM rbdspy_items{where} ORDER BY pk", params)]

    def item_lines(self) -> Iterator[str]:
        where, params = self.scoped()
        return (data for (data,) in self.conn.execute(f"SELECT data FROM rbdspy_items{where} ORDER BY pk", params))

    def count(self) -> int:
        where, params = self.scoped()
        return int(self.conn.execute(f"SELECT count(*) FROM rbdspy_items{where}", params).fetchone()[0])

    def contains(self, id: str) -> bool:
        where, params = self.scoped("id = %s", params=[id])
        return self.conn.execute(f"SELECT 1 FROM rbdspy_items{where} LIMIT 1", params).fetchone() is not None

    def counts(self) -> tuple[dict[str, int], dict[str | None, int]]:
        where, params = self.scoped()
        by_source = dict(
            self.conn.execute(
                f"SELECT source, count(*) FROM rbdspy_items{where} GROUP BY source ORDER BY source", params
            ).fetchall()
        )
        by_scope = dict(
            self.conn.execute(
                f"SELECT scope, count(*) FROM rbdspy_items{where} GROUP BY scope ORDER BY scope NULLS FIRST", params
            ).fetchall()
        )
        return by_source, by_scope

    def find(self, id: str) -> tuple[int, str | None, MemoryItem | None] | None:
        """Inside a write transaction: (pk, scope, item) of the item with this id, its row locked."""
        where, params = self.scoped("id = %s", params=[id])
        row = self.conn.execute(
            f"SELECT pk, scope, data FROM rbdspy_items{where} ORDER BY pk LIMIT 1 FOR UPDATE", params
        ).fetchone()
        return (row[0], row[1], self.parse(id, row[2])) if row is not None else None

    def update_item(self, pk: int, item: MemoryItem, vectors: dict[str, np.ndarray]) -> None:
        sets, params = ["scope = %s", "source = %s", "data = %s"], [item.scope, item.source, item.model_dump_json()]
        for key, vector in vectors.items():
            sets.append(f"{vector_column(key)} = %s")
            params.append(vector)
        self.conn.execute(f"UPDATE rbdspy_items SET {', '.join(sets)} WHERE pk = %s", (*params, pk))

    def delete_ids(self, ids: Sequence[str]) -> list[tuple[int, str | None]]:
        where, params = self.scoped("id = ANY(%s)", params=[list(dict.fromkeys(ids))])
        return self.conn.execute(f"DELETE FROM rbdspy_items{where} RETURNING pk, scope", params).fetchall()

    def mark_used(self, ids: Sequence[str], now: datetime, outcome: bool | None = None) -> list[MemoryItem]:
        return self._update_items(ids, lambda item: used_item(item, now, outcome))

    def set_retired(self, ids: Sequence[str], retired: bool) -> list[MemoryItem]:
        return self._update_items(
            ids, lambda item: item.model_copy(update={"retired": retired}) if item.retired != retired else None
        )

    def _update_items(self, ids: Sequence[str], change: Callable[[MemoryItem], MemoryItem | None]) -> list[MemoryItem]:
        """Rewrites the JSON of each item `change` returns a new version of; the rows are locked
        (in pk order, so two writers never deadlock) from the read to the commit."""
        updated: list[tuple[int, MemoryItem]] = []
        for chunk in chunks(list(ids)):
            where, params = self.scoped("id = ANY(%s)", params=[list(chunk)])
            for pk, id, data in self.conn.execute(
                f"SELECT pk, id, data FROM rbdspy_items{where} ORDER BY pk FOR UPDATE", params
            ).fetchall():
                old = self.parse(id, data)
                new = change(old) if old is not None else None
                if new is not None:
                    updated.append((pk, new))
        if updated:
            with self.conn.cursor() as cursor:
                cursor.executemany(
                    "UPDATE rbdspy_items SET data = %s WHERE pk = %s", [(i.model_dump_json(), pk) for pk, i in updated]
                )
        return [item for _, item in updated]

    def embedded_batches(self, size: int) -> Iterator[tuple[list[MemoryItem], np.ndarray, np.ndarray]]:
        """(items, task vectors, item vectors) of every valid row in pk order, `size` rows at a
        time, through a server-side cursor (call inside a transaction)."""
        where, params = self.scoped()
        with self.conn.transaction(), self.conn.cursor(name="rbdspy_embedded") as cursor:
            cursor.execute(f"SELECT id, data, task_vec, item_vec FROM rbdspy_items{where} ORDER BY pk", params)
            while rows := cursor.fetchmany(size):
                kept = [(item, t, o) for id, data, t, o in rows if (item := self.parse(id, data)) is not None]
                if kept:
                    yield (
                        [item for item, _, _ in kept],
                        np.stack([as_array(t) for _, t, _ in kept]),
                        np.stack([as_array(o) for _, _, o in kept]),
                    )

    # ------------------------------------------------------------------ episodes

    def record_episode(self, task: str, outcome: bool | None, ids: Sequence[str], now: datetime) -> None:
        self.conn.execute(
            "INSERT INTO rbdspy_episodes(namespace, at, task, outcome, items) VALUES (%s, %s, %s, %s, %s)",
            (self.write_namespace, now.isoformat(), task, outcome, json.dumps(list(ids))),
        )

    def base_rate(self) -> tuple[int, int]:
        where, params = self.scoped()
        decided, wins = self.conn.execute(
            f"SELECT count(outcome), count(*) FILTER (WHERE outcome) FROM rbdspy_episodes{where}", params
        ).fetchone()
        return int(decided), int(wins)

    def episodes(self, limit: int | None = None) -> list[dict[str, Any]]:
        where, params = self.scoped()
        rows = self.conn.execute(
            f"SELECT seq, at, task, outcome, items FROM rbdspy_episodes{where} ORDER BY seq DESC LIMIT %s",
            [*params, limit],
        ).fetchall()
        return [
            {"seq": seq, "at": at, "task": task, "outcome": outcome, "items": json.loads(items)}
            for seq, at, task, outcome, items in reversed(rows)
        ]


def as_array(vector: Any) -> np.ndarray:
    """A pgvector value as float32 numpy (the client returns its own Vector type)."""
    return np.asarray(vector.to_numpy() if hasattr(vector, "to_numpy") else vector, dtype=np.float32)


def vector_column(key: str) -> str:
    if key not in ("task", "item"):  # never interpolate anything else into SQL
        raise ValueError(f"Unknown vector key {key!r}.")
    return f"{key}_vec"
