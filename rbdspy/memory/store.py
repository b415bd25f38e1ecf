"""MemoryStore: the persistent bank of memory items, searchable by embedding.

A store is a directory: `memory.db`, the SQLite source of truth (sqlite.py: items, both of
their vectors, the change log; durable when a write returns, shareable by several processes), and
two FAISS indexes derived from it (vector_index.py: one over the items' task texts, the paper's
query-to-query retrieval, one over the items' own texts), saved next to it on `flush()`/`close()`
and rebuilt or caught up whenever they are missing, unreadable or behind. Searches are exact
(exact_search.py). This class is the public face that composes them: the API, the embedder and
its compatibility with what the store holds, input checks, and one lock around it all; the
operations on the whole bank (JSONL export and import, migrations, stats) are whole_bank.py's.

Given a postgresql:// URL instead, the same class keeps the bank on a PostgreSQL server with
pgvector (postgres.py: rows; pg_search.py: search in the server), shared by many agents;
backends.py opens the one a path names.

A store is a live handle, never copied: deep copies (an optimizer's, one per candidate) share it,
and a pickled program carries a `LazyStore` that reopens the bank where it was (or, while
snapshot.py's `snapshots()` is active, a copy of its items).
"""

from __future__ import annotations

import logging
import os
import pickle
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import faiss
import numpy as np

from rbdspy.memory.backends import open_backend
from rbdspy.memory.base_database import KEYS
from rbdspy.memory.embedders import Embedder, as_embedder
from rbdspy.memory.faults import AFTER_COMMIT, INDEX_UPDATE, REBUILD, Faults
from rbdspy.memory.inputs import (
    UNSCOPED,
    as_items,
    as_matrix,
    check_k,
    check_unique_ids,
    distinct_ids,
    normalise,
    valid_item,
)
from rbdspy.memory.pg_search import PgVectors
from rbdspy.memory.postgres import PgDatabase, check_namespace, is_postgres_url
from rbdspy.memory.ranking import MIN_BASE_EPISODES, confidently_harmful
from rbdspy.memory.sqlite import DB_FILE, LOG_KEEP, OP_ADD, OP_DEL, OP_SCOPE, OP_VEC, Database
from rbdspy.memory.store_embedding import StoreEmbedding
from rbdspy.memory.vector_index import VectorIndex
from rbdspy.memory.whole_bank import WholeBankMixin
from rbdspy.types import MemoryItem

__all__ = ["MemoryStore", "LazyStore", "UNSCOPED", "KEYS", "LOG_KEEP", "reference"]

logger = logging.getLogger(__name__)

Key = Literal["task", "item"]


class MemoryStore(WholeBankMixin):
    """A directory holding memory items (SQLite) and their two FAISS indexes, or, given a
    `postgresql://` URL, a bank on a PostgreSQL server with pgvector (postgres.py), where
    `namespace` confines every read and write to one tenant's items (None: read every
    namespace, write to "default").

    `key` picks which vector `search` uses unless a call overrides it: "task" (default) matches
    the query against the task each item was learned on, as the paper does; "item" matches it
    against the item's own text. All methods are thread-safe; several processes may open the
    same path. Use it as a context manager, or call `close()`, so the indexes are saved and the
    next open does not have to rebuild them.

    `faults` is the test seam for crash recovery (memory/faults.py): actions run between a
    write's commit and the indexes. Leave it unset outside tests.
    """

    UNSCOPED = UNSCOPED

    def __init__(
        self,
        path: str | os.PathLike[str],
        embedder: Any = None,
        key: Key = "task",
        *,
        namespace: str | None = None,
        faults: Faults | None = None,
    ):
        if key not in KEYS:
            raise ValueError(f"MemoryStore key must be 'task' or 'item', got {key!r}.")
        self.key: str = key
        self.faults = faults if faults is not None else Faults()
        self._lock = threading.RLock()
        self._closed = False
        self.namespace = check_namespace(namespace)
        backend = open_backend(path, self.namespace)
        self.path: Path | str = backend.path  # what messages show: a URL without its password
        self._db: Database | PgDatabase = backend.db
        self._vectors: VectorIndex | PgVectors = backend.vectors
        try:
            self._embedding = StoreEmbedding(embedder, self.path, self._db, self._recorded_dim)
            self._embedding.check_at_open()
        except BaseException:
            self._db.close()
            raise

    @property
    def _conn(self) -> sqlite3.Connection:
        return self._db.conn

    @property
    def backend(self) -> str:
        """ "sqlite" (a directory, SQLite + FAISS) or "postgresql" (a server, pgvector)."""
        return "postgresql" if isinstance(self._db, PgDatabase) else "sqlite"

    @property
    def _indexes(self) -> dict[str, faiss.Index] | None:
        return self._vectors.indexes

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"This MemoryStore ({self.path}) is closed; open a new MemoryStore on the path.")

    # ------------------------------------------------------------------ embedding

    @property
    def embedder(self) -> Embedder | None:
        return self._embedding.embedder

    @embedder.setter
    def embedder(self, embedder: Any) -> None:
        self._embedding.embedder = as_embedder(embedder) if embedder is not None else None

    def _recorded_dim(self) -> int | None:
        with self._lock:
            self._check_open()
            return self._db.recorded_dim()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """The store embedder's L2-normalised float32 vectors for `texts`, shape (n, dim)."""
        return self._embedding.embed(texts)

    def embed_items(self, items: Sequence[MemoryItem]) -> tuple[np.ndarray, np.ndarray]:
        """(task vectors, item vectors) of `items` in one embedder call; identical texts (an item
        with no task has the same text under both keys) are embedded once."""
        return self._embedding.embed_items(items)

    # ------------------------------------------------------------------ writes

    def add(self, items: MemoryItem | Iterable[MemoryItem]) -> list[str]:
        """Store new items (one embedder call, one transaction). Returns their ids.
        An id already in the store, or repeated in `items`, raises ValueError and stores nothing."""
        batch = as_items(items)
        if not batch:
            return []
        self._embedding.require("add")
        check_unique_ids(batch)
        task_vectors, item_vectors = self.embed_items(batch)
        return self._insert(batch, task_vectors, item_vectors, with_embedder=True)

    def add_embedded(
        self,
        items: MemoryItem | Iterable[MemoryItem],
        task_vectors: Any,
        item_vectors: Any,
        *,
        embedder_name: str | None = None,
        normalised: bool = False,
    ) -> list[str]:
        """Store new items with vectors the caller computed (row i belongs to item i), e.g. a
        benchmark or a migration that embeds elsewhere. Vectors are L2-normalised here, unless
        `normalised` says they are a store's own unit vectors already (a migration copies them
        bit for bit, so search answers exactly as it did). `embedder_name` names the embedder
        that made them: recorded on a new bank, checked against the recorded one otherwise."""
        batch = as_items(items)
        if not batch:
            return []
        check_unique_ids(batch)
        task = as_matrix(task_vectors, len(batch), "task_vectors")
        own = as_matrix(item_vectors, len(batch), "item_vectors")
        if task.shape[1] != own.shape[1]:
            raise ValueError(f"task_vectors have dim {task.shape[1]} but item_vectors have dim {own.shape[1]}.")
        if not normalised:
            task, own = normalise(task), normalise(own)
        return self._insert(batch, task, own, with_embedder=False, name=embedder_name)

    def _insert(
        self, batch: list[MemoryItem], task: np.ndarray, own: np.ndarray, with_embedder: bool, name: str | None = None
    ) -> list[str]:
        ids = [item.id for item in batch]
        with self._lock:
            self._check_open()
            with self._db.write_tx():
                self._embedding.record_meta(int(task.shape[1]), with_embedder, name)
                seq_before = self._db.change_seq()
                first = self._db.items_seq() + 1
                pks = list(range(first, first + len(batch)))
                self._db.insert_items(pks, batch, task, own)
                self._db.log([(OP_ADD, pk) for pk in pks])
                seq_after = self._db.change_seq()
            scopes = {item.scope for item in batch}
            self._after_write(
                seq_before, seq_after, lambda: self._vectors.add(np.asarray(pks, dtype=np.int64), task, own), scopes
            )
        return ids

    def update(self, item: MemoryItem) -> MemoryItem:
        """Replace the stored fields of the item with `item.id` (KeyError if absent). Its vectors
        are recomputed only when its task text or own text changed; its row (FAISS id) is kept."""
        if not isinstance(item, MemoryItem):
            raise TypeError(f"update() takes a MemoryItem, got {type(item).__name__}.")
        item = valid_item(item, "update()")
        new_texts = {key: item.key_text(key) for key in KEYS}  # type: ignore[arg-type]
        vectors: dict[str, np.ndarray] = {}
        for _attempt in range(5):
            with self._lock:
                self._check_open()
                with self._db.write_tx():
                    row = self._db.find(item.id)
                    if row is None:
                        raise KeyError(f"No memory item with id {item.id!r} in {self.path}; use add() for new items.")
                    pk, old_scope, old = row
                    # An old row that no longer validates is replaced whole, vectors included.
                    changed = [key for key in KEYS if old is None or old.key_text(key) != new_texts[key]]  # type: ignore[arg-type]
                    missing = [key for key in changed if key not in vectors]
                    if not missing:
                        seq_before = self._db.change_seq()
                        self._db.update_item(pk, item, {key: vectors[key] for key in changed})
                        self._db.log(
                            ([(OP_VEC, pk)] if changed else []) + ([(OP_SCOPE, pk)] if old_scope != item.scope else [])
                        )
                        seq_after = self._db.change_seq()
                if not missing:
                    new_vectors = {key: vectors[key] for key in changed}
                    self._after_write(
                        seq_before,
                        seq_after,
                        lambda pk=pk, new_vectors=new_vectors: self._vectors.replace(pk, new_vectors),
                        {old_scope, item.scope},
                    )
                    return item
            # Embed outside the lock and the write transaction (a model call can be slow), then retry.
            self._embedding.require("update (the item's text changed, so it is re-embedded)")
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
            with self._db.write_tx():
                seq_before = self._db.change_seq()
                found = self._db.delete_ids(id_list)
                pks = [pk for pk, _ in found]
                self._db.log([(OP_DEL, pk) for pk in pks])
                seq_after = self._db.change_seq()
            if pks:
                self._after_write(
                    seq_before, seq_after, lambda: self._vectors.remove(pks), {scope for _, scope in found}
                )
        return len(pks)

    def mark_used(self, ids: str | Iterable[str]) -> int:
        """Count one use of each item (use_count + 1, last_used_at = now), durably. Unknown ids
        (e.g. removed meanwhile) are ignored; returns how many items were marked."""
        id_list = distinct_ids(ids)
        if not id_list:
            return 0
        with self._lock:
            self._check_open()
            with self._db.write_tx():
                return len(self._db.mark_used(id_list, datetime.now(UTC)))

    def record_use(
        self, ids: str | Iterable[str], *, task: str = "", outcome: bool | None = None, retire_harmful: bool = False
    ) -> list[str]:
        """Records one task in a single transaction: the items served for it (each counts a use
        and, with a decided `outcome`, a success or failure and the value it teaches; see
        memory/ranking.py) and the task's outcome itself, which the store's base rate is made of.
        With `retire_harmful`, served items that are now confidently harmful are retired.
        Returns the ids retired."""
        id_list = distinct_ids(ids)
        now = datetime.now(UTC)
        with self._lock:
            self._check_open()
            with self._db.write_tx():
                self._db.record_episode(task, outcome, id_list, now)
                used = self._db.mark_used(id_list, now, outcome) if id_list else []
                if not (retire_harmful and used and outcome is not None):
                    return []
                base = self._base_rate()
                harmful = [i.id for i in used if confidently_harmful(i.successes, i.failures, base)]
                return [i.id for i in self._db.set_retired(harmful, True)] if harmful else []

    @contextmanager
    def exclusive(self) -> Iterator[MemoryStore]:
        """Hold this bank's write lock across several calls: no other writer (thread, process
        or, on PostgreSQL, machine, in this namespace) writes until the block ends. A dedup's
        search-then-add runs in one, so two agents that learn the same lesson at the same moment
        store it once."""
        with self._lock:
            self._check_open()
            with self._db.exclusive():
                yield self

    def _base_rate(self) -> float | None:
        decided, wins = self._db.base_rate()
        return wins / decided if decided >= MIN_BASE_EPISODES else None

    def set_retired(self, ids: str | Iterable[str], retired: bool = True) -> int:
        """Retires (or, with retired=False, restores) items: a retired item is kept, listed and
        exported, but never served. Returns how many items changed."""
        id_list = distinct_ids(ids)
        with self._lock:
            self._check_open()
            with self._db.write_tx():
                return len(self._db.set_retired(id_list, retired)) if id_list else 0

    def episodes(self, limit: int | None = None) -> list[dict[str, Any]]:
        """The tasks recorded by `record_use`, oldest first: when, the task, its outcome
        (True/False/None) and the ids of the items served for it."""
        with self._lock:
            self._check_open()
            return self._db.episodes(limit)

    def _after_write(
        self, seq_before: int, seq_after: int, apply: Callable[[], None], scopes: Iterable[str | None]
    ) -> None:
        """After a commit: the fault points, then the change applied to the live indexes."""
        self.faults.hit(AFTER_COMMIT)

        def update() -> None:
            self.faults.hit(INDEX_UPDATE)
            apply()

        self._vectors.after_write(seq_before, seq_after, update, scopes)

    # ------------------------------------------------------------------ reads

    def get(self, id: str) -> MemoryItem:
        """The item with this id; KeyError naming the id when there is none."""
        with self._lock:
            self._check_open()
            item = self._db.item(id)
        if item is None:
            raise KeyError(f"No memory item with id {id!r} in {self.path}.")
        return item

    def list(self, scope: Any = None, limit: int | None = None) -> list[MemoryItem]:
        """Items in insertion order; `scope` restricts to one scope (UNSCOPED: items without one)."""
        if limit is not None and (not isinstance(limit, int) or limit < 0):
            raise ValueError(f"limit must be a non-negative int or None, got {limit!r}.")
        with self._lock:
            self._check_open()
            return self._db.items(limit, scope=None if scope is UNSCOPED else scope, unscoped=scope is UNSCOPED)

    def ids(self) -> list[str]:
        """Every stored id in insertion order, rows that do not validate included (so they can be
        named and removed)."""
        with self._lock:
            self._check_open()
            return self._db.ids()

    @property
    def invalid_ids(self) -> set[str]:
        """Ids of rows that reads found not to validate and skipped (reported once each)."""
        return set(self._db.invalid_ids)

    def __len__(self) -> int:
        with self._lock:
            self._check_open()
            return self._db.count()

    def __contains__(self, id: object) -> bool:
        if not isinstance(id, str):
            return False
        with self._lock:
            self._check_open()
            return self._db.contains(id)

    def search(
        self, query: str, k: int = 1, scope: Any = None, key: Key | None = None
    ) -> list[tuple[MemoryItem, float]]:
        """The k items most similar to `query` (cosine), best first, as (item, score).

        `scope` restricts the search to one scope before the top-k is taken (so k items of that
        scope come back whenever it has k); None searches every item; UNSCOPED only items without
        a scope. `key` overrides the store's default ("task" or "item"). Results are exact; equal
        scores come in insertion order.
        """
        if not isinstance(query, str) or not query.strip():
            raise ValueError("search() needs a non-empty query string.")
        check_k(k)
        vector = self.embed([query])[0]
        return self.search_vector(vector, k=k, scope=scope, key=key)

    def search_vector(
        self, vector: Any, k: int = 1, scope: Any = None, key: Key | None = None
    ) -> list[tuple[MemoryItem, float]]:
        """`search` for a caller that has its own query vector (same embedder, any norm)."""
        check_k(k)
        if key is not None and key not in KEYS:
            raise ValueError(f"key must be 'task', 'item' or None (the store's default {self.key!r}), got {key!r}.")
        key = key or self.key
        query = as_matrix(vector, 1, "vector")
        with self._lock:
            self._check_open()
            recorded = self._db.recorded_dim()
            if recorded is not None and query.shape[1] != recorded:
                raise ValueError(
                    f"Query vector has dim {query.shape[1]}, but this store's vectors have dim {recorded}."
                )
            query = normalise(query)
            with self._db.read_tx():
                self._sync()
                hits = self._vectors.search(query, k, key, scope)
                items = self._db.items_by_pk([pk for pk, _ in hits])
        return [(items[pk], score) for pk, score in hits if pk in items]

    # ------------------------------------------------------------------ keeping FAISS in step

    def _sync(self) -> None:
        """Bring the in-memory indexes to the database's current change counter: load, catch up,
        or rebuild. Call with the lock held, inside a read transaction."""
        db_seq = self._db.change_seq()
        try:
            if not self._vectors.try_sync(db_seq):
                self._rebuild(db_seq)
        except BaseException:
            self._vectors.dirty = True
            raise

    def _rebuild(self, db_seq: int) -> None:
        self.faults.hit(REBUILD)
        self._vectors.rebuild(db_seq)

    def _read_index_file(self, key: str) -> tuple[faiss.Index, dict[str, Any]] | None:
        return self._vectors.read_file(key)

    def flush(self) -> None:
        """Save both indexes (if they changed since last saved) and prune the change log.
        Items are already durable; this only spares the next open a catch-up or rebuild."""
        with self._lock:
            self._check_open()
            if self.backend == "postgresql":
                self._vectors.save()  # nothing to save; builds the HNSW indexes once the bank is large
                return
            if self._vectors.indexes is not None or self._vectors.dirty:
                with self._db.read_tx():
                    self._sync()
                self._vectors.save()
            # else never searched here: nothing to save, the next open catches up
            self._db.prune_log(LOG_KEEP)

    def checkpoint(self) -> None:
        """Make memory.db hold every item by itself (SQLite folds its write-ahead log in), so a
        bank copied or committed without its side files is whole. PostgreSQL: nothing to do."""
        with self._lock:
            self._check_open()
            if self.backend != "postgresql":
                self._db.checkpoint()

    def close(self) -> None:
        """Save the indexes and close the database. Idempotent."""
        with self._lock:
            if self._closed:
                return
            try:
                self.flush()
            finally:
                self._closed = True
                self._vectors.unload()
                self._db.close()

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ a live handle, never copied

    def __deepcopy__(self, memo: dict[int, Any]) -> MemoryStore:
        # DSPy optimizers deep-copy the program once per candidate; all copies share this store.
        return self

    def __copy__(self) -> MemoryStore:
        return self

    # While `snapshots()` (snapshot.py) is active: the function that pickles this store as a copy of
    # its items. None: the store pickles by reference (a LazyStore).
    _pickle_as_snapshot: Callable[[MemoryStore], tuple] | None = None

    def __reduce__(self):
        # A live database handle is never pickled: a pickled program (an MLflow-logged model)
        # carries a reference that reopens this bank, lazily, where it was (`LazyStore`), or,
        # inside `rbdspy.log_bank(..., snapshot=True)`, a copy of its items (snapshot.py).
        if self._pickle_as_snapshot is not None:
            return self._pickle_as_snapshot(self)
        return reference(self.path, self.embedder, self.key, self.namespace)

    def __repr__(self) -> str:
        embedder = self.embedder.name if self.embedder is not None else None
        namespace = f", namespace={self.namespace!r}" if self.namespace is not None else ""
        return f"MemoryStore({str(self.path)!r}, embedder={embedder!r}, key={self.key!r}{namespace})"


# ---- a store by reference: what a pickled program carries instead of a live handle --------------


def reference(
    path: Path | str, embedder: Any, key: str, namespace: str | None = None
) -> tuple[type, tuple[str, Any, str, str | None]]:
    """The `__reduce__` value of a MemoryStore: reopen lazily at the same absolute path (URL)."""
    if embedder is not None:
        try:
            pickle.dumps(embedder)
        except Exception as exc:
            raise TypeError(
                f"this MemoryStore's embedder {getattr(embedder, 'name', embedder)!r} cannot be pickled "
                f"({type(exc).__name__}: {exc}), so a program holding the store cannot be saved by reference; "
                "use an embedder from rbdspy.make_embedder, or give yours a __reduce__"
            ) from exc
    where = path if is_postgres_url(path) else str(Path(path).resolve())
    return LazyStore, (where, embedder, key, namespace)


class LazyStore:
    """Stands in for the MemoryStore at `path` and opens it on first use."""

    def __init__(self, path: str, embedder: Any = None, key: str = "task", namespace: str | None = None):
        self._args = (path, embedder, key, namespace)
        self._store = None

    def _open(self):
        if self._store is None:
            path, embedder, key, namespace = self._args
            if is_postgres_url(path):
                try:
                    self._store = MemoryStore(path, embedder=embedder, key=key, namespace=namespace)
                except ConnectionError as exc:
                    raise ConnectionError(
                        f"the memory bank this program was saved with is not reachable: {exc}; set PGPASSWORD "
                        "if the server needs one, or set program.store = MemoryStore(<its URL>)"
                    ) from exc
                return self._store
            if not (Path(path) / DB_FILE).is_file():
                raise FileNotFoundError(
                    f"the memory bank this program was saved with is not reachable at {path} "
                    f"(no {DB_FILE}); copy the bank there, or set program.store = MemoryStore(<its path>)"
                )
            self._store = MemoryStore(path, embedder=embedder, key=key)
        return self._store

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # never open the bank for pickle's or copy's own lookups
            raise AttributeError(name)
        return getattr(self._open(), name)

    def __len__(self) -> int:
        return len(self._open())

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._open()

    def __enter__(self):
        return self._open().__enter__()

    def __exit__(self, *exc: Any) -> None:
        if self._store is not None:
            self._store.__exit__(*exc)

    def __reduce__(self):
        return LazyStore, self._args

    def __deepcopy__(self, memo: dict[int, Any]) -> LazyStore:
        return self

    def __copy__(self) -> LazyStore:
        return self

    def __repr__(self) -> str:
        state = "open" if self._store is not None else "not opened yet"
        return f"LazyStore({self._args[0]!r}, {state})"
