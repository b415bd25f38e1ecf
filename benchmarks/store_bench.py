"""MemoryStore performance: ingest rate, single-query search latency, reopen time.

    python -m benchmarks.store_bench [--sizes 1000 10000 100000] [--queries 200] [--smoke]

Vectors are random, 384-d, L2-normalised (numpy seed fixed), so embedding cost is excluded and
the figures are the store's own: SQLite durability (WAL, synchronous=FULL) on ingest, exact search
on one thread (a float16 FAISS scan picks candidates, their float32 vectors decide; each size checks
its answers against a brute-force numpy search), and reopening from the saved index vs rebuilding
it from SQLite. Half the items are in scope "big" and the other half in five scopes of 10% each, so
scoped search is measured on a small scope (FAISS id selector) and on a large one (global-first).
Targets: search p50 <= 5 ms at 100k items; ingest >= 5,000 items/s in batches of 1,000.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from rbdspy.bench.tables import benchmark_command, reproduce_line, table
from rbdspy.memory.store import KEYS, MemoryStore
from rbdspy.types import MemoryItem, Provenance

DIM = 384
BATCH = 1000
SEED = 0


def _random_unit(rng: np.random.Generator, n: int) -> np.ndarray:
    vectors = rng.standard_normal((n, DIM), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def _items(start: int, n: int) -> list[MemoryItem]:
    return [
        MemoryItem(
            title=f"Lesson {i}",
            description=f"When the task looks like family {i % 97}.",
            content=f"Strategy number {i}: check the preconditions, act, then verify the observation.",
            source="success",
            scope="big" if i % 2 == 0 else f"small-{i % 10}",
            provenance=[Provenance(task=f"benchmark task {i}", verdict="success")],
        )
        for i in range(start, start + n)
    ]


def _latency_ms(store: MemoryStore, queries: np.ndarray, k: int, scope: str | None = None) -> tuple[float, float]:
    timings = []
    for query in queries:
        t0 = time.perf_counter()
        store.search_vector(query, k=k, scope=scope)
        timings.append((time.perf_counter() - t0) * 1e3)
    return float(np.percentile(timings, 50)), float(np.percentile(timings, 99))


def bench_size(size: int, n_queries: int, root: Path) -> dict[str, float]:
    rng = np.random.default_rng(SEED)
    path = root / f"store-{size}"
    items = _items(0, size)
    task_vectors = _random_unit(rng, size)
    item_vectors = _random_unit(rng, size)
    queries = _random_unit(rng, n_queries)

    store = MemoryStore(path)  # no embedder: vectors come from the benchmark
    t0 = time.perf_counter()
    for start in range(0, size, BATCH):
        end = min(start + BATCH, size)
        store.add_embedded(items[start:end], task_vectors[start:end], item_vectors[start:end])
    ingest_s = time.perf_counter() - t0

    store.search_vector(queries[0], k=1)  # first read builds the index from SQLite
    for scope in ("small-3", "big"):
        store.search_vector(queries[0], k=1, scope=scope)  # and the scopes' id selectors
    row: dict[str, float] = {"size": size, "ingest": size / ingest_s}
    row["p50_k1"], row["p99_k1"] = _latency_ms(store, queries, 1)
    row["p50_k5"], row["p99_k5"] = _latency_ms(store, queries, 5)
    row["p50_small"], row["p99_small"] = _latency_ms(store, queries, 5, scope="small-3")
    row["p50_big"], row["p99_big"] = _latency_ms(store, queries, 5, scope="big")
    for query in queries[:20]:  # exact: the same top 5 as brute force over all the vectors
        brute = np.argsort(-(task_vectors.astype(np.float64) @ query.astype(np.float64)), kind="stable")[:5]
        assert [item.id for item, _ in store.search_vector(query, k=5)] == [items[i].id for i in brute], (
            "inexact search"
        )
    expected = [(item.id, score) for item, score in store.search_vector(queries[1], k=5)]
    store.close()  # saves the index files

    t0 = time.perf_counter()
    reopened = MemoryStore(path)
    got = [(item.id, score) for item, score in reopened.search_vector(queries[1], k=5)]
    row["reopen_file"] = time.perf_counter() - t0
    reopened.close()
    assert got == expected, "reopened store returned different results"

    for key in KEYS:
        (path / f"index.{key}.faiss").unlink()
    t0 = time.perf_counter()
    rebuilt = MemoryStore(path)
    got = [(item.id, score) for item, score in rebuilt.search_vector(queries[1], k=5)]
    row["reopen_rebuild"] = time.perf_counter() - t0
    rebuilt.close()
    assert got == expected, "rebuilt store returned different results"
    shutil.rmtree(path)
    return row


COLUMNS = (
    "items",
    "ingest (items/s)",
    "k=1 p50 / p99 (ms)",
    "k=5 p50 / p99 (ms)",
    "k=5 in 10% scope p50 / p99 (ms)",
    "k=5 in 50% scope p50 / p99 (ms)",
    "reopen, index file (s)",
    "reopen, rebuild (s)",
)


def _table(rows: list[dict[str, float]]) -> str:
    cells = [
        [
            f"{int(r['size']):,}",
            f"{r['ingest']:,.0f}",
            *(f"{r['p50_' + k]:.2f} / {r['p99_' + k]:.2f}" for k in ("k1", "k5", "small", "big")),
            f"{r['reopen_file']:.2f}",
            f"{r['reopen_rebuild']:.2f}",
        ]
        for r in rows
    ]
    return table(COLUMNS, cells, align="r" * len(COLUMNS))


def main(argv: list[str] | None = None) -> list[dict[str, float]]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--smoke", action="store_true", help="tiny run (1,000 items, 20 queries) to check the script works"
    )
    parser.add_argument("--dir", default=None, help="where to put the temporary stores (default: the system temp dir)")
    args = parser.parse_args(argv)
    sizes, n_queries = ([1000], 20) if args.smoke else (args.sizes, args.queries)
    if any(s <= 0 for s in sizes) or n_queries < 2:
        parser.error("sizes must be positive and --queries at least 2")

    root = Path(tempfile.mkdtemp(prefix="rbdspy-bench-", dir=args.dir))
    try:
        rows = [bench_size(size, n_queries, root) for size in sizes]
    finally:
        shutil.rmtree(root, ignore_errors=True)
    command = benchmark_command(
        "store_bench", "--smoke" if args.smoke else f"--sizes {' '.join(map(str, sizes))} --queries {n_queries}"
    )
    print(
        f"MemoryStore benchmark: {DIM}-d random unit vectors (seed {SEED}), batches of {BATCH}, "
        f"{n_queries} single queries, exact (float16 scan + float32 re-score), FAISS on 1 thread, "
        f"durable writes (WAL, synchronous=FULL)."
    )
    print(
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}.\n"
    )
    print(_table(rows))
    print(f"\n{reproduce_line(command)}")
    return rows


if __name__ == "__main__":
    main()
