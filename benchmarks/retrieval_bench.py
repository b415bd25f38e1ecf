"""Retrieval precision offline, on the labelled trajectories in datasets/: does the top-1 item come
from a task of the same type, and does a similarity floor keep unrelated items out?

    python -m benchmarks.retrieval_bench [--embedder local|hash] [--weights 0.05 0.1 0.2 0.5]

A bank holds one item per *train* record, keyed the way ReasoningBank keys it: by the task text
(the paper's query-to-query retrieval), each with the situation it came from (the task plus the
first observation). Each query record then retrieves the top-1 item by task text alone
(`query="task"`) or with situations re-ranking the candidates at a given weight
(`query="situation"`, `MemoryRetriever.situation_weight`), and the table reports:

- same type: the share of queries whose top-1 item was learned on the query's task type;
- distinct items: how many different items the queries were served (identical task texts tie,
  and a tie always served one item when ties were broken by insertion order);
- for each floor, the share of queries served anything and the same-type precision of what was
  served, with queries of types the bank has never seen (held out per environment: the serves a
  floor should refuse) reported apart.

The floor is chosen on train (train items answering other train records, the record itself
excluded) and reported on dev; nothing here is tuned on dev.
"""

from __future__ import annotations

import argparse
import platform
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from rbdspy.bench.tables import benchmark_command, table, table_row
from rbdspy.datasets.dataset import load_records
from rbdspy.lm import make_embedder
from rbdspy.loop.retriever import MemoryRetriever
from rbdspy.memory.store import MemoryStore
from rbdspy.types import MemoryItem, Provenance

DATA = Path(__file__).resolve().parents[1] / "datasets"
TRAIN = ["scienceworld-train.jsonl", "twx-train.jsonl"]
DEV = ["scienceworld-dev.jsonl", "twx-dev.jsonl"]
# Unseen types: removed from the bank, still queried. A floor should serve them nothing.
HELD_OUT = {"scienceworld": ["grow-fruit", "lifespan-longest-lived", "test-conductivity"], "twx": ["mapreader"]}


def _records(names: list[str]):
    return [r for name in names for r in load_records(DATA / name)]


def _bank(path: Path, records, embedder) -> tuple[MemoryStore, dict[str, str]]:
    store = MemoryStore(path, embedder=embedder)
    items, types = [], {}
    for i, record in enumerate(records):
        if record.task_type in HELD_OUT.get(record.env, []):
            continue
        situation = record.trajectory.situation()
        item = MemoryItem(
            title=f"item {i}",
            description="A lesson learned on this task.",
            content="Placeholder content: retrieval is keyed on the task or situation.",
            source="success",
            provenance=[Provenance(task=record.trajectory.task, situation=situation)],
        )
        items.append(item)
        types[item.id] = (record.task_type, record.trajectory.id)
    store.add(items)
    return store, types


def _before(store, task: str) -> list[dict]:
    """Retrieval as it was: the store's top-k by task text, ties in insertion order."""
    return [{"id": item.id, "similarity": score} for item, score in store.search(task, k=3)]


def _evaluate(store, types, queries, weight, floors: list[float], exclude_self: bool) -> dict:
    # Similarity alone and no floor: this bench measures the floors, over the ranking by similarity.
    retriever = MemoryRetriever(
        store,
        k=3,
        ranking="similarity",
        min_similarity=None,
        situation_weight=weight if isinstance(weight, float) else 0.0,
    )
    rows = []
    for record in queries:
        if weight == "before":
            hits = _before(store, record.trajectory.task)
        else:
            situation = record.trajectory.situation() if weight is not None else None
            hits = retriever(task=record.trajectory.task, situation=situation).retrieval
        if exclude_self:
            hits = [h for h in hits if types[h["id"]][1] != record.trajectory.id]
        top = hits[0] if hits else None
        seen = record.task_type not in HELD_OUT.get(record.env, [])
        rows.append((seen, record.task_type, top))
    seen_rows = [r for r in rows if r[0]]
    same = sum(1 for _, t, top in seen_rows if top and types[top["id"]][0] == t)
    result = {
        "queries": len(rows),
        "same_type": same / max(1, len(seen_rows)),
        "distinct_items": len({top["id"] for _, _, top in rows if top}),
        "floors": {},
    }
    for floor in floors:
        served_seen = [(t, top) for s, t, top in rows if s and top and top["similarity"] >= floor]
        served_unseen = sum(1 for s, _, top in rows if not s and top and top["similarity"] >= floor)
        unseen = sum(1 for s, _, _ in rows if not s)
        right = sum(1 for t, top in served_seen if types[top["id"]][0] == t)
        result["floors"][floor] = {
            "served_seen": len(served_seen) / max(1, len(seen_rows)),
            "precision": right / max(1, len(served_seen)),
            "served_unseen": served_unseen / max(1, unseen),
        }
    return result


def _by_env(records) -> dict[str, list]:
    groups = defaultdict(list)
    for record in records:
        groups[record.env].append(record)
    return groups


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedder", default="local", help="local (MiniLM) or hash")
    parser.add_argument("--floors", type=float, nargs="+", default=[0.5, 0.6, 0.7])
    parser.add_argument("--weights", type=float, nargs="+", default=[0.1, 0.5])
    args = parser.parse_args()
    embedder = make_embedder(args.embedder)
    train, dev = _records(TRAIN), _records(DEV)
    print(f"# Retrieval precision on datasets/ ({len(train)} train items, {len(dev)} dev queries)")
    print(f"embedder {args.embedder}; {platform.processor() or platform.machine()}; command:")
    print(f"    {benchmark_command('retrieval_bench', f'--embedder {args.embedder}')}\n")
    print(table(["split", "query", "env", "same type (top-1)", "distinct items served"], align="lllrr"))
    floor_rows = []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        store, types = _bank(Path(tmp) / "bank", train, embedder)
        for weight in ["before", None, *args.weights]:
            query = {"before": "task, ties by insertion (before)", None: "task"}.get(weight) or f"situation x{weight:g}"
            for split, queries, exclude in (("train", train, True), ("dev", dev, False)):
                for env, group in sorted(_by_env(queries).items()):
                    r = _evaluate(store, types, group, weight, args.floors, exclude)
                    served = f"{r['distinct_items']} of {r['queries']}"
                    print(table_row([split, query, env, f"{r['same_type']:.1%}", served]))
                    floor_rows += [(split, query, env, f, v) for f, v in r["floors"].items()]
        store.close()
    header = ["split", "query", "env", "floor", "seen types served", "precision when served", "unseen types served"]
    cells = [
        [split, query, env, f"{floor:.2f}", *(f"{v[key]:.1%}" for key in ("served_seen", "precision", "served_unseen"))]
        for split, query, env, floor, v in floor_rows
    ]
    print("\n" + table(header, cells, align="lllrrrr"))
    print(f"\n{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
