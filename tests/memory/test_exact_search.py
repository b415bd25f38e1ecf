"""Search results are exact: identical to a brute-force search over the stored float32 vectors.

The store scans float16 copies of the vectors and re-scores candidates from the float32 ones
(exact_search.py); these tests hold it to a reference that shares none of that code: every score
computed as the correctly rounded dot product (exact float64 products summed with math.fsum),
rounded to float32, sorted best first with ties in insertion order. The data is built to be hard
for the float16 scan: clusters of near-duplicates whose scores differ by less than float16's
rounding error (so the approximate order is often wrong), exact duplicates (ties), and scopes.
"""

from __future__ import annotations

import logging
import math

import faiss
import numpy as np
import pytest

from rbdspy.memory.exact_search import is_scan_index, new_scan_index, score_error_bound
from rbdspy.memory.index_file import read_index_file, write_index_file
from rbdspy.memory.inputs import normalise
from rbdspy.memory.store import UNSCOPED, MemoryStore
from rbdspy.types import MemoryItem

DIM = 64
SCOPES = [None, UNSCOPED, "big", "mid", "small"]


def _clustered(rng: np.random.Generator, clusters: int, members: int, spread: float, singles: int) -> np.ndarray:
    centers = rng.standard_normal((clusters, DIM))
    near = np.repeat(centers, members, axis=0) + spread * rng.standard_normal((clusters * members, DIM))
    return np.vstack([near, rng.standard_normal((singles, DIM))])


def _unit(vectors: np.ndarray) -> np.ndarray:
    """What the store keeps of caller vectors: float32 rows, then L2-normalised in float32."""
    return normalise(np.asarray(vectors, dtype=np.float32).reshape(len(vectors), -1))


def _reference(vectors: dict[str, np.ndarray], query: np.ndarray) -> dict[str, list[float]]:
    """Per key, every row's exact cosine with the unit query, correctly rounded to float32."""
    unit = _unit(query[None])[0].astype(np.float64)
    return {
        key: [float(np.float32(min(math.fsum(row), 1.0))) for row in stored.astype(np.float64) * unit]
        for key, stored in vectors.items()
    }


class Bank:
    """A store built with add_embedded, and the same data kept in numpy for the reference."""

    def __init__(self, store: MemoryStore):
        self.store = store
        self.items: list[MemoryItem] = []  # in insertion (row id) order, removed ones included
        self.vectors: dict[str, list[np.ndarray]] = {"task": [], "item": []}
        self.live: list[bool] = []

    def add(self, task: np.ndarray, own: np.ndarray, scopes: list[str | None], batch: int = 500) -> None:
        items = [
            MemoryItem(title=f"t{len(self.items) + i}", description="d", content="c", scope=s)
            for i, s in enumerate(scopes)
        ]
        for start in range(0, len(items), batch):
            end = start + batch
            self.store.add_embedded(items[start:end], task[start:end], own[start:end])
        self.items += items
        self.vectors["task"] += list(_unit(task))
        self.vectors["item"] += list(_unit(own))
        self.live += [True] * len(items)

    def remove(self, positions: list[int]) -> None:
        assert self.store.remove([self.items[p].id for p in positions]) == len(positions)
        for p in positions:
            self.live[p] = False

    def expected(self, scores: list[float], k: int, scope) -> list[tuple[str, float]]:
        pool = [
            p
            for p, item in enumerate(self.items)
            if self.live[p] and (scope is None or item.scope == (None if scope is UNSCOPED else scope))
        ]
        best = sorted(pool, key=lambda p: (-scores[p], p))[:k]
        return [(self.items[p].id, scores[p]) for p in best]

    def check(self, store: MemoryStore, queries: np.ndarray, ks=(1, 5, 12, 40)) -> int:
        """Asserts every answer equals the reference; returns how many top-k's the float16
        scores alone would have ordered wrongly (so the test is known to exercise re-scoring)."""
        vectors = {key: np.asarray(rows) for key, rows in self.vectors.items()}
        approximate_wrong = 0
        for query in queries:
            reference = _reference(vectors, query)
            unit = _unit(query[None])[0].astype(np.float64)
            for key in ("task", "item"):
                approx = vectors[key].astype(np.float16).astype(np.float64) @ unit
                for scope in SCOPES:
                    for k in ks:
                        got = [
                            (item.id, score) for item, score in store.search_vector(query, k=k, scope=scope, key=key)
                        ]
                        want = self.expected(reference[key], k, scope)
                        assert got == want, (key, scope, k)
                        by_approx = self.expected(list(approx), k, scope)
                        approximate_wrong += [i for i, _ in by_approx] != [i for i, _ in want]
        return approximate_wrong


@pytest.fixture
def bank(tmp_path):
    rng = np.random.default_rng(11)
    store = MemoryStore(tmp_path / "exact")  # no embedder: vectors come from the test
    bank = Bank(store)
    task = _clustered(rng, clusters=25, members=30, spread=1e-3, singles=1500)
    own = _clustered(rng, clusters=25, members=30, spread=1e-3, singles=1500)
    order = rng.permutation(len(task))  # clusters spread over the insertion order
    task, own = task[order], own[order]
    scopes = list(
        rng.choice(np.array(["big", "mid", "small", ""], dtype=object), size=len(task), p=[0.55, 0.25, 0.1, 0.1])
    )
    scopes = [s or None for s in scopes]
    bank.add(task, own, scopes)
    # exact ties: copies of some rows, added later (higher row ids), some in other scopes
    copies = rng.choice(len(task), size=20, replace=False)
    for round_ in range(3):
        copy_scopes = [scopes[c] if round_ != 1 else "small" for c in copies]
        bank.add(task[copies], own[copies], copy_scopes)
    bank.rng, bank.task, bank.copies = rng, task, copies
    bank.clustered = np.flatnonzero(order < 25 * 30)  # rows that have near-duplicates
    yield bank
    store.close()


def _queries(bank: Bank) -> np.ndarray:
    rng = bank.rng
    near_cluster = bank.task[rng.choice(bank.clustered, 4, replace=False)] + 1e-3 * rng.standard_normal((4, DIM))
    on_copies = bank.task[bank.copies[:3]]  # ties at the very top
    return np.vstack([near_cluster, on_copies, rng.standard_normal((3, DIM)), np.zeros((1, DIM))])


def test_search_is_exact_on_near_ties_and_exact_ties(bank):
    queries = _queries(bank)
    wrong = bank.check(bank.store, queries)
    assert wrong > 20  # float16 alone would often be wrong here; the store never is


def test_search_stays_exact_after_removals_reopen_and_rebuild(bank, tmp_path):
    queries = _queries(bank)
    rng = bank.rng
    removed = sorted(set(rng.choice(len(bank.items), 300, replace=False).tolist()) | {int(bank.copies[0])})
    bank.remove(removed)
    again = bank.task[bank.copies[:5]]  # more copies of tied rows, after removals
    bank.add(again, again, ["mid"] * 5)
    bank.check(bank.store, queries, ks=(1, 7))
    bank.store.close()
    path = tmp_path / "exact"
    for _ in range(2):  # from the saved index files, then rebuilt from SQLite
        with MemoryStore(path) as reopened:
            bank.check(reopened, queries, ks=(1, 7))
        for key in ("task", "item"):
            (path / f"index.{key}.faiss").unlink()
    bank.store = MemoryStore(path)  # for the fixture's close


def test_float16_score_error_stays_within_the_bound():
    """The bound that makes re-scoring exact, checked against FAISS on hostile vectors: huge
    single components, components in float16's subnormal range, and sign patterns that make
    rounding errors add up."""
    rng = np.random.default_rng(3)
    dim = 384
    rows = [
        rng.standard_normal(dim),
        np.eye(dim)[0],
        np.full(dim, 1.0),
        rng.standard_normal(dim) * 1e-4 + np.eye(dim)[5],
    ]
    spiky = rng.standard_normal(dim) * 1e-6
    spiky[:3] = 1.0
    rows.append(spiky)
    for _ in range(200):
        rows.append(rng.standard_normal(dim) * rng.choice([1.0, 1e-3], size=dim))
    stored = _unit(np.asarray(rows))
    # a query aligned with each row's float16 rounding error, so the errors add up
    errors = stored.astype(np.float16).astype(np.float64) - stored
    queries = _unit(np.vstack([np.sign(errors) * np.abs(stored), stored, rng.standard_normal((20, dim))]))
    index = new_scan_index(dim)
    index.add_with_ids(stored, np.arange(len(stored), dtype=np.int64))
    faiss.omp_set_num_threads(1)
    approx, ids = index.search(queries, len(stored))
    exact = queries.astype(np.float64) @ stored.astype(np.float64).T  # float64 error ~1e-16: exact enough here
    worst = float(np.max(np.abs(approx - np.take_along_axis(exact, ids, axis=1))))
    bound = score_error_bound(dim)
    print(f"worst float16 score error {worst:.3g}, bound {bound:.3g}")
    assert worst <= bound
    assert worst > bound / 10  # the hostile rows do reach a fair share of the bound


def test_index_file_in_the_older_float32_format_is_rebuilt(tmp_path, caplog):
    """Stores saved before the float16 scan hold IndexFlatIP files: they are valid, but the
    re-scoring bound assumes float16 codes, so they are rebuilt (once) rather than trusted."""
    rng = np.random.default_rng(5)
    path = tmp_path / "old"
    task, own = rng.standard_normal((50, DIM)), rng.standard_normal((50, DIM))
    items = [MemoryItem(title=f"t{i}", description="d", content="c") for i in range(50)]
    with MemoryStore(path) as store:
        store.add_embedded(items, task, own)
        expected = [(item.id, score) for item, score in store.search_vector(task[7], k=3)]
    for key, vectors in (("task", task), ("item", own)):
        header = read_index_file(path / f"index.{key}.faiss")[1]
        old = faiss.IndexIDMap2(faiss.IndexFlatIP(DIM))
        old.add_with_ids(_unit(vectors), np.arange(1, 51, dtype=np.int64))
        kept = {name: header[name] for name in ("key", "db_uuid", "seq", "max_pk", "embedder")}
        write_index_file(path / f"index.{key}.faiss", old, kept)
    with caplog.at_level(logging.INFO, logger="rbdspy.memory.store"), MemoryStore(path) as store:
        assert [(item.id, score) for item, score in store.search_vector(task[7], k=3)] == expected
    assert "older format" in caplog.text
    assert is_scan_index(read_index_file(path / "index.task.faiss")[0])  # saved again in the new format
