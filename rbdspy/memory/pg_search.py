"""Search in PostgreSQL: pgvector ranks the candidates, the float32 vectors decide.

The same answer as the embedded store's exact search (exact_search.py), computed in the server:

- A small bank (fewer than `ANN_MIN_ITEMS` items in the namespace) is searched exactly: pgvector's
  `<=>` orders every row of the namespace and scope (index scans off, so no approximate index is
  used), the rows within a float32 rounding window of the k-th are fetched (doubling while more
  may tie), and their exact cosines (float64 products, as exact_search.py computes them) pick the
  top k, equal scores in insertion order.
- A large one is searched through an HNSW index (`vector_cosine_ops`), built by `flush()` once the
  bank is that large. The namespace and scope filters are inside the query; pgvector applies them
  to the index's candidates, so a scope that is a small part of the bank can come back short:
  then that scope is searched exactly (its rows are few, found through the scope's btree index),
  so a scoped query still returns k items of its scope whenever it has k.

The indexes are expression indexes on `task_vec::vector(dim)`: the vector columns have no fixed
dim (the embedder decides it at the first write), and HNSW needs one.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from rbdspy.memory.exact_search import best_first, exact_scores
from rbdspy.memory.inputs import check_scope
from rbdspy.memory.postgres import PgDatabase, as_array, vector_column

__all__ = ["ANN_MIN_ITEMS", "PgVectors"]

ANN_MIN_ITEMS = 10_000  # a namespace this large is searched through HNSW (exact scans get slow)
EF_SEARCH = 100  # HNSW candidate list: recall@5 >= 0.95 on the scale bench at 100k items
_TIE_MARGIN = 8
_COUNT_TTL_S = 10.0  # how long a namespace's size is trusted before it is counted again


def rounding_window(dim: int) -> float:
    """How far pgvector's float32 cosine distance can be from the float64 one, with slack: a
    candidate this close to the k-th is re-scored exactly."""
    return 4.0 * (dim + 8) * 2.0**-24


class PgVectors:
    """VectorIndex's role for a PostgreSQL bank: nothing to keep in step, search in SQL."""

    indexes = None
    dirty = False

    def __init__(self, db: PgDatabase):
        self.db = db
        self.ann_min_items = ANN_MIN_ITEMS
        self.ef_search = EF_SEARCH
        self._count: tuple[float, int] | None = None  # (when, namespace size)
        self._ann: dict[str, tuple[float, bool]] = {}  # key -> (when, whether its HNSW index is built)

    # --- the SQLite store's index-maintenance hooks: the server's indexes maintain themselves

    def after_write(self, seq_before: int, seq_after: int, apply: Any, scopes: Any) -> None:
        self._count = None

    def try_sync(self, db_seq: int) -> bool:
        return True

    def rebuild(self, db_seq: int) -> None:
        return None

    def read_file(self, key: str) -> None:
        return None

    def unload(self) -> None:
        return None

    def save(self) -> None:
        """Builds the HNSW indexes once the bank is large enough to need them (CONCURRENTLY:
        other agents keep reading and writing meanwhile)."""
        dim = self.db.recorded_dim()
        if dim is None or self.db.count() < self.ann_min_items:
            return
        for key in ("task", "item"):
            if not self.has_ann_index(key):
                self.build_ann_index(key)

    def ann_index_name(self, key: str) -> str:
        return f"rbdspy_items_{vector_column(key)}_hnsw_{self.db.recorded_dim()}"

    def has_ann_index(self, key: str, fresh: bool = True) -> bool:
        now = time.monotonic()
        if not fresh and key in self._ann and now - self._ann[key][0] <= _COUNT_TTL_S:
            return self._ann[key][1]
        row = self.db.conn.execute(
            "SELECT indisvalid FROM pg_index JOIN pg_class ON pg_class.oid = pg_index.indexrelid WHERE relname = %s",
            (self.ann_index_name(key),),
        ).fetchone()
        self._ann[key] = (now, bool(row and row[0]))
        return self._ann[key][1]

    def build_ann_index(self, key: str, m: int = 16, ef_construction: int = 64) -> None:
        dim = self.db.recorded_dim()
        name = self.ann_index_name(key)
        self.db.conn.execute(f"DROP INDEX IF EXISTS {name}")  # an invalid one left by an interrupted build
        self.db.conn.execute(
            f"CREATE INDEX CONCURRENTLY {name} ON rbdspy_items USING hnsw "
            f"(({vector_column(key)}::vector({int(dim)})) vector_cosine_ops) WITH (m = {int(m)}, "
            f"ef_construction = {int(ef_construction)})"
        )
        self.has_ann_index(key)  # refresh what searches believe

    def stats(self, db_seq: int) -> dict[str, Any]:
        dim = self.db.recorded_dim()
        return {
            "backend": "postgresql",
            "hnsw": {key: self.has_ann_index(key) for key in ("task", "item")} if dim else {},
            "search": "hnsw" if dim and self._uses_ann("task") else "exact",
        }

    # --- search

    def namespace_size(self) -> int:
        now = time.monotonic()
        if self._count is None or now - self._count[0] > _COUNT_TTL_S:
            self._count = (now, self.db.count())
        return self._count[1]

    def _uses_ann(self, key: str) -> bool:
        return self.namespace_size() >= self.ann_min_items and self.has_ann_index(key, fresh=False)

    def search(
        self, query: np.ndarray, k: int, key: str, scope: Any, exact: bool | None = None
    ) -> list[tuple[int, float]]:
        """The top-k (row id, cosine) for the unit `query` (shape (1, dim)), best first, ties in
        row-id order; `scope` (a str, UNSCOPED, or None for all) applies before the top-k.
        `exact` forces one way (None: exact below `ann_min_items`, HNSW above, when built)."""
        if scope is not None:
            check_scope(scope)
        dim = self.db.recorded_dim()
        if dim is None:
            return []
        conditions, params = self.db.scope_condition(scope)
        if not query.any():  # every exact score is 0.0: insertion order decides
            where, values = self.db.scoped(*conditions, params=params)
            rows = self.db.conn.execute(f"SELECT pk FROM rbdspy_items{where} ORDER BY pk LIMIT %s", [*values, k])
            return [(int(pk), 0.0) for (pk,) in rows]
        use_ann = self._uses_ann(key) if exact is None else not exact
        if use_ann:
            found = self._ranked(query[0], k, key, conditions, params, dim, ann=True)
            if len(found) >= k:
                return found
        return self._ranked(query[0], k, key, conditions, params, dim, ann=False)

    def _ranked(
        self, query: np.ndarray, k: int, key: str, conditions: list[str], params: list[Any], dim: int, ann: bool
    ) -> list[tuple[int, float]]:
        column = f"{vector_column(key)}::vector({int(dim)})"
        where, values = self.db.scoped(*conditions, params=params)
        # ORDER BY the distance alone (anything more and pgvector cannot use its index), by its
        # alias, so it is computed once per row.
        sql = (
            f"SELECT pk, {column}, {column} <=> %s::vector({int(dim)}) AS distance "
            f"FROM rbdspy_items{where} ORDER BY distance LIMIT %s"
        )
        window = rounding_window(dim)
        fetch = k + _TIE_MARGIN
        # Session settings, sent only when they change: one round trip per search, not four.
        self.db.setting("enable_indexscan", "on" if ann else "off")  # off: never the approximate index
        if ann:
            self.db.setting("hnsw.ef_search", str(int(max(self.ef_search, fetch))))
        while True:
            rows = self.db.conn.execute(sql, [query, *values, fetch]).fetchall()
            approx = 1.0 - np.array([r[2] for r in rows], dtype=np.float64)
            if ann or len(rows) < fetch or approx[-1] < approx[k - 1] - window:
                break
            fetch *= 2
        if not rows:
            return []
        boundary = approx[min(k, len(rows)) - 1]
        keep = [i for i in range(len(rows)) if approx[i] >= boundary - window or i < k + _TIE_MARGIN]
        pks = np.array([rows[i][0] for i in keep], dtype=np.int64)
        vectors = np.stack([as_array(rows[i][1]) for i in keep])
        return best_first(pks, exact_scores(vectors, query), k)
