"""One bank shared by many agents: PostgreSQL + pgvector under concurrent load and at scale.

    python -m benchmarks.scale_bench --part writers [--writers 8 --readers 8 --per-writer 200]
    python -m benchmarks.scale_bench --part search [--sizes 100000 1000000 --queries 200]
    python -m benchmarks.scale_bench --part ray      (runs benchmarks.scale_bench_ray)
    python -m benchmarks.scale_bench --quick          (every part, small: a smoke test)

A throwaway PostgreSQL server (pgserver, with pgvector) is started in a temporary directory
unless --url names one.

- writers: W writer processes and R reader processes on one bank. Each writer learns
  `per-writer` lessons through DedupPolicy (as ReasoningBank(consolidation="dedup") does): three
  quarters of them its own, one quarter the same `shared` lessons every writer learns, which
  must be stored once each with every writer's provenance. Readers search as fast as they can.
  Reported: writes/s, search p50/p99 under that load, items lost (must be 0), duplicates stored
  (must be 0) and merges lost (must be 0).
- search: latency and recall@1/@5 against exact search, at each size, for pgvector HNSW (at
  each --ef-search), pgvector exact and the embedded SQLite + FAISS store. Vectors are synthetic
  and shaped like sentence embeddings: lessons come in families of similar tasks, and they vary
  along few directions (a 48-d latent space of 2,000 family centroids plus spread, mapped into
  384-d by a fixed random matrix, plus small isotropic noise; MiniLM embeddings of real text have
  an intrinsic dimension of a few dozen, while isotropic 384-d noise, on which HNSW recall
  collapses, is no text's). Queries are stored vectors plus noise. Exact = numpy's brute force.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from rbdspy.bench.tables import benchmark_command, reproduce_line, table
from rbdspy.memory import DedupPolicy, HashEmbedder, MemoryStore
from rbdspy.types import MemoryItem, Provenance

DIM = 384
SEED = 0


def _server(url: str | None):
    if url:
        return None, url
    import pgserver

    server = pgserver.get_server(tempfile.mkdtemp(prefix="rbdspy-pg-"), cleanup_mode="delete")
    return server, server.get_uri()


def _fresh_database(base_url: str, name: str) -> str:
    import psycopg

    with psycopg.connect(base_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    head, _, tail = base_url.partition("?")
    return head.rsplit("/", 1)[0] + f"/{name}" + (f"?{tail}" if tail else "")


def _percentiles(ms: list[float]) -> tuple[float, float]:
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 99))


# ---------------------------------------------------------------------------- writers and readers


def _lesson(text: str, writer: int) -> MemoryItem:
    return MemoryItem(
        title=text,
        description=f"When the task is like: {text}.",
        content=f"Strategy: {text}; check the preconditions first, then verify the observation.",
        provenance=[Provenance(task=f"task for {text}", trajectory_id=f"writer-{writer}")],
    )


def _writer(url: str, writer: int, per_writer: int, shared: int, start: float, out: mp.Queue) -> None:
    own = per_writer - shared
    lessons = [f"writer {writer} lesson {i}" for i in range(own)] + [f"shared lesson {i}" for i in range(shared)]
    np.random.default_rng(writer).shuffle(lessons)
    policy = DedupPolicy(threshold=0.99)
    with MemoryStore(url, embedder=HashEmbedder(dim=DIM), namespace="team") as store:
        while time.time() < start:
            time.sleep(0.001)
        t0 = time.perf_counter()
        for text in lessons:
            policy.apply(store, [_lesson(text, writer)])
        out.put(("writer", writer, time.perf_counter() - t0))


def _reader(url: str, reader: int, start: float, stop: mp.Event, out: mp.Queue) -> None:
    timings = []
    with MemoryStore(url, embedder=HashEmbedder(dim=DIM), namespace="team") as store:
        queries = store.embed([f"task for writer {w} lesson {i}" for w in range(8) for i in range(0, 50, 7)])
        while time.time() < start:
            time.sleep(0.001)
        i = 0
        while not stop.is_set():
            t0 = time.perf_counter()
            store.search_vector(queries[i % len(queries)], k=5)
            timings.append((time.perf_counter() - t0) * 1000)
            i += 1
    out.put(("reader", reader, timings))


def run_writers(base_url: str, writers: int, readers: int, per_writer: int, shared: int) -> dict:
    url = _fresh_database(base_url, "rbdspy_scale_writers")
    MemoryStore(url, embedder=HashEmbedder(dim=DIM), namespace="team").close()
    ctx = mp.get_context("fork")  # the workers are this file's functions, also when it is loaded by path
    out, stop = ctx.Queue(), ctx.Event()
    start = time.time() + 5.0  # every process connected and waiting before the first write
    procs = [ctx.Process(target=_writer, args=(url, w, per_writer, shared, start, out)) for w in range(writers)]
    procs += [ctx.Process(target=_reader, args=(url, r, start, stop, out)) for r in range(readers)]
    for proc in procs:
        proc.start()
    write_times = [out.get(timeout=1800)[2] for _ in range(writers)]
    wall = max(write_times)
    stop.set()
    latencies = [ms for _ in range(readers) for ms in out.get(timeout=120)[2]]
    for proc in procs:
        proc.join(timeout=60)
    with MemoryStore(url, namespace="team") as store:
        items = store.list()
    titles = [item.title for item in items]
    expected = {f"writer {w} lesson {i}" for w in range(writers) for i in range(per_writer - shared)}
    expected |= {f"shared lesson {i}" for i in range(shared)}
    merges_lost = sum(
        1
        for item in items
        if item.title.startswith("shared") and len({p.trajectory_id for p in item.provenance}) != writers
    )
    p50, p99 = _percentiles(latencies) if latencies else (float("nan"), float("nan"))
    return {
        "writers": writers,
        "readers": readers,
        "writes": writers * per_writer,
        "writes_per_s": writers * per_writer / wall,
        "searches": len(latencies),
        "search_p50_ms": p50,
        "search_p99_ms": p99,
        "items_lost": len(expected - set(titles)),
        "duplicates_stored": len(titles) - len(set(titles)),
        "merges_lost": merges_lost,
        "items": len(items),
        "expected_items": len(expected),
    }


# ---------------------------------------------------------------------------- search at scale


LATENT = 48


def clustered(n: int, rng: np.random.Generator, families: int = 2000, spread: float = 0.5) -> np.ndarray:
    """n unit vectors: family centroid + spread in a LATENT-d space, mapped to DIM-d, plus noise."""
    centroids = rng.standard_normal((families, LATENT), dtype=np.float32)
    mapping = rng.standard_normal((LATENT, DIM), dtype=np.float32) / np.sqrt(LATENT)
    vectors = np.empty((n, DIM), dtype=np.float32)
    for s in range(0, n, 100_000):  # in chunks: 1M x 384 float32 temporaries add up
        m = min(100_000, n - s)
        latent = centroids[rng.integers(0, families, m)] + spread * rng.standard_normal((m, LATENT), dtype=np.float32)
        vectors[s : s + m] = latent @ mapping + 0.05 * rng.standard_normal((m, DIM), dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _top5(scores: np.ndarray) -> np.ndarray:
    top = np.argpartition(-scores, 5)[:5]
    return top[np.argsort(-scores[top], kind="stable")]


def _items(n: int, start: int = 0) -> list[MemoryItem]:
    return [
        MemoryItem(title=f"Lesson {i}", description="d", content="c", provenance=[Provenance(task=f"task {i}")])
        for i in range(start, start + n)
    ]


def _fill(store: MemoryStore, vectors: np.ndarray, batch: int = 5000) -> float:
    t0 = time.perf_counter()
    for s in range(0, len(vectors), batch):
        chunk = vectors[s : s + batch]
        store.add_embedded(_items(len(chunk), s), chunk, chunk, embedder_name="synthetic-clustered")
    return time.perf_counter() - t0


PAUSED: list[int] = []  # --pause-pids: other work on a shared machine, stopped while latencies are timed


@contextmanager
def _quiet():
    import signal

    for pid in PAUSED:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in PAUSED:
            os.kill(pid, signal.SIGCONT)


def _measure(search, queries: np.ndarray, truth: np.ndarray) -> dict:
    timings, at1, at5 = [], 0, 0
    with _quiet():
        for query in queries[:5]:  # warm caches; not timed
            search(query)
        for query, exact in zip(queries, truth, strict=True):
            t0 = time.perf_counter()
            found = search(query)
            timings.append((time.perf_counter() - t0) * 1000)
            at1 += int(found[:1] == list(exact[:1]))
            at5 += len(set(found[:5]) & set(exact[:5]))
    p50, p99 = _percentiles(timings)
    return {"p50_ms": p50, "p99_ms": p99, "recall@1": at1 / len(queries), "recall@5": at5 / (5 * len(queries))}


def run_search(base_url: str, size: int, n_queries: int, build_limit_s: float, ef_search: list[int]) -> list[dict]:
    rng = np.random.default_rng(SEED)
    vectors = clustered(size, rng)
    queries = vectors[rng.integers(0, size, n_queries)] + 0.02 * rng.standard_normal((n_queries, DIM), dtype=np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    truth = np.stack([_top5(vectors @ query) for query in queries])  # row i is item i
    rows = []

    url = _fresh_database(base_url, f"rbdspy_scale_{size}")
    with MemoryStore(url) as pg:
        fill_s = _fill(pg, vectors)
        rows_in_order = pg._db.conn.execute("SELECT pk FROM rbdspy_items ORDER BY pk").fetchall()
        index_of = {pk: i for i, (pk,) in enumerate(rows_in_order)}  # item i was the i-th added

        def pg_search(exact: bool):
            return lambda q: [index_of[pk] for pk, _ in pg._vectors.search(q.reshape(1, -1), 5, "task", None, exact)]

        exact_row = _measure(pg_search(True), queries[: max(20, n_queries // 10)], truth[: max(20, n_queries // 10)])
        rows.append({"size": size, "store": "pgvector exact", "build_s": fill_s, **exact_row})
        pg._db.conn.execute("SET maintenance_work_mem = '4GB'")
        pg._db.conn.execute(f"SET statement_timeout = '{int(build_limit_s)}s'")
        t0 = time.perf_counter()
        try:
            pg._vectors.build_ann_index("task")
            built = True
        except Exception as exc:  # the build ran past the limit
            built = False
            print(f"HNSW build at {size:,} items stopped after {time.perf_counter() - t0:.0f} s: {exc}")
        build_s = time.perf_counter() - t0
        pg._db.conn.execute("SET statement_timeout = 0")
        for ef in ef_search if built else ():
            pg._vectors.ef_search = ef
            rows.append(
                {"size": size, "store": f"pgvector HNSW (ef_search {ef})", "build_s": build_s}
                | _measure(pg_search(False), queries, truth)
            )
        if not built:
            rows.append({"size": size, "store": "pgvector HNSW", "build_s": build_s, "not_built": True})

    with tempfile.TemporaryDirectory(prefix="rbdspy-scale-") as directory, MemoryStore(directory) as embedded:
        fill_s = _fill(embedded, vectors)
        embedded.search_vector(queries[0], k=5)  # load the indexes: measured below is the steady state
        order = {item.id: i for i, item in enumerate(embedded.list())}
        rows.append(
            {"size": size, "store": "SQLite + FAISS (embedded)", "build_s": fill_s}
            | _measure(lambda q: [order[i.id] for i, _ in embedded.search_vector(q, k=5)], queries, truth)
        )
    return rows


# ---------------------------------------------------------------------------- main


def _cell(value) -> str:
    return f"{value:,.2f}" if isinstance(value, float) else f"{value:,}" if isinstance(value, int) else str(value)


def _table(rows: list[dict], columns: list[tuple[str, str]]) -> str:
    cells = [[_cell(row.get(key, "-")) for _, key in columns] for row in rows]
    return table([title for title, _ in columns], cells)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", choices=["writers", "search", "ray", "all"], default="all")
    parser.add_argument("--url", help="an existing PostgreSQL server with pgvector (default: start one)")
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--readers", type=int, default=8)
    parser.add_argument("--per-writer", type=int, default=200)
    parser.add_argument("--shared", type=int, default=50)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--ef-search", type=int, nargs="+", default=[40, 100, 200])
    parser.add_argument("--build-limit-s", type=float, default=1200.0)
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    parser.add_argument(
        "--pause-pids",
        type=int,
        nargs="*",
        default=[],
        help="on a shared machine: processes to SIGSTOP while search latencies are timed (resumed after)",
    )
    parser.add_argument("--quick", action="store_true", help="every part at a small size (a smoke test)")
    args = parser.parse_args(argv)
    if args.quick:
        args.writers, args.readers, args.per_writer, args.shared = 2, 1, 12, 4
        args.sizes, args.queries, args.ef_search = [3000], 20, [100]
    PAUSED[:] = args.pause_pids
    result: dict = {"machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"}
    server, base_url = _server(args.url)
    try:
        if args.part in ("writers", "all"):
            result["writers"] = run_writers(base_url, args.writers, args.readers, args.per_writer, args.shared)
            print(_table([result["writers"]], [(k, k) for k in result["writers"]]))
        if args.part in ("search", "all"):
            result["search"] = [
                row
                for size in args.sizes
                for row in run_search(base_url, size, args.queries, args.build_limit_s, args.ef_search)
            ]
            columns = [("items", "size"), ("store", "store"), ("build s", "build_s"), ("p50 ms", "p50_ms")]
            columns += [("p99 ms", "p99_ms"), ("recall@1", "recall@1"), ("recall@5", "recall@5")]
            print(_table(result["search"], columns))
    finally:
        if server is not None:
            server.cleanup()
    if args.part in ("ray", "all"):
        from benchmarks import scale_bench_ray

        result["ray"] = scale_bench_ray.main(["--quick"] if args.quick else [])
    print(f"Machine: {result['machine']}")
    print(reproduce_line(benchmark_command("scale_bench", *(argv if argv is not None else sys.argv[1:]))))
    if args.out:
        args.out.write_text(json.dumps(result, indent=2, default=str), encoding="utf-8")
    return result


if __name__ == "__main__":
    main()
