"""Counts of a labelled-trajectory dataset, as Markdown tables: what `rbdspy data stats` prints
and what `datasets/README.md` is written from, so the datasheet never drifts from the files."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from rbdspy.datasets.dataset import LabelledTrajectory, iter_records


def _split_of(path: Path, records: Sequence[LabelledTrajectory]) -> str:
    splits = {r.split for r in records}
    return splits.pop() if len(splits) == 1 else "mixed"


def file_table(paths: Iterable[Path]) -> tuple[str, dict[str, Counter]]:
    """One row per file (split, records, successes, failures, agent rollouts), plus totals per split."""
    lines = [
        "| file | split | records | success | failure | agent rollouts | task types |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    totals: dict[str, Counter] = {}
    for path in paths:
        records = list(iter_records(path))
        split = _split_of(path, records)
        labels = Counter(r.label for r in records)
        agent = sum(r.kind == "agent" for r in records)
        types = len({(r.env, r.task_type) for r in records})
        lines.append(
            f"| `{path.name}` | {split} | {len(records)} | {labels['success']} | {labels['failure']} "
            f"| {agent} | {types} |"
        )
        total = totals.setdefault(split, Counter())
        total.update(
            {"records": len(records), "success": labels["success"], "failure": labels["failure"], "agent": agent}
        )
    for split, total in sorted(totals.items()):
        lines.append(
            f"| **all {split}** | {split} | {total['records']} | {total['success']} | {total['failure']} "
            f"| {total['agent']} | |"
        )
    return "\n".join(lines), totals


def type_table(paths: Iterable[Path]) -> str:
    """Records per (env, task type) and split, by label and by provenance kind."""
    counts: Counter = Counter()
    kinds: dict[tuple[str, str, str], Counter] = {}
    for path in paths:
        for r in iter_records(path):
            key = (r.env, r.task_type, r.split)
            counts[(key, r.label)] += 1
            kinds.setdefault(key, Counter())[r.kind] += 1
    lines = ["| env | task type | split | success | failure | by kind |", "|---|---|---|---:|---:|---|"]
    for key in sorted(kinds):
        by_kind = ", ".join(f"{k} {v}" for k, v in sorted(kinds[key].items()))
        lines.append(
            f"| {key[0]} | {key[1]} | {key[2]} | {counts[(key, 'success')]} | {counts[(key, 'failure')]} | {by_kind} |"
        )
    return "\n".join(lines)


def overlap(paths: Iterable[Path]) -> int:
    """Task ids that appear in more than one split (must be 0: dev tasks are unseen in train)."""
    splits: dict[str, set[str]] = {}
    for path in paths:
        for r in iter_records(path):
            splits.setdefault(r.task_id, set()).add(r.split)
    return sum(len(s) > 1 for s in splits.values())
