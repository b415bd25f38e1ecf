"""Where a bench arm's memory loop wins or loses, stage by stage, from a run directory alone
(its records and the arm's bank, opened read-only so a run in progress is not disturbed).

    python -m benchmarks.bank_anatomy --run docs/bench/lift-local [--arm reasoningbank-improved]

Prints: how the labels agreed with the environment; what was written (by kind, content length,
lessons that recite one layout's directions, name the step limit, or echo the extractor prompt's
own quoted example); what was served and how the tasks went against the bare agent on the same
tasks, by kind of the top item; and the prompt tokens memory adds to the agent's own calls.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import sys
from collections import defaultdict
from pathlib import Path

from rbdspy.bench.memory_report import memory_summary
from rbdspy.bench.records import arm_path, read_records
from rbdspy.bench.tables import benchmark_command, table
from rbdspy.signatures.extract import ExtractFailureLessons, ExtractSuccessLessons

DIRECTIONS = re.compile(r"\b(north|south|east|west)\b", re.I)
QUOTED = re.compile(r'"([^"]{12,})"')


def _items(bank: Path) -> list[tuple[str, dict]]:
    db = sqlite3.connect(f"file:{bank / 'memory.db'}?mode=ro", uri=True)
    try:
        return [(source, json.loads(data)) for source, data in db.execute("SELECT source, data FROM items ORDER BY pk")]
    finally:
        db.close()


def _echoes_prompt(text: str, examples: list[str]) -> bool:
    """True when the lesson repeats 70% or more of the words of one of the prompt's quoted examples."""
    words = set(re.findall(r"[a-z]+", text.lower()))
    return any(len(words & set(ex.split())) >= 0.7 * len(set(ex.split())) for ex in examples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", type=Path, required=True)
    parser.add_argument("--arm", default="reasoningbank-improved")
    parser.add_argument("--baseline", default="no-memory")
    args = parser.parse_args()
    config = json.loads((args.run / "config.json").read_text(encoding="utf-8"))["config"]
    rows = read_records(arm_path(args.run, args.arm))
    base = {r["index"]: r for r in read_records(arm_path(args.run, args.baseline))}
    if not rows or not base:
        sys.exit(f"{args.run}: no records yet for {args.arm} or {args.baseline}")
    print(f"# {args.arm} in {args.run} ({len(rows)} tasks played)")
    print(f"    {benchmark_command('bank_anatomy', f'--run {args.run}', f'--arm {args.arm}')}\n")

    labels = memory_summary(rows)["labels"]
    print(
        f"labels: agree {labels['agree']}/{labels['labelled']}, false success {labels['false_success']}, "
        f"false failure {labels['false_failure']}, indeterminate {labels['indeterminate']}"
    )

    items = _items(args.run / "banks" / args.arm)
    examples = [
        q.lower() for sig in (ExtractSuccessLessons, ExtractFailureLessons) for q in QUOTED.findall(sig.__doc__ or "")
    ]
    limit = re.compile(rf"\b{config['max_steps']}\b|step limit|number of (actions|moves|steps)", re.I)
    cells = []
    for kind in sorted({s for s, _ in items}):
        group = [d for s, d in items if s == kind]
        words = sum(len(d["content"].split()) for d in group) / len(group)
        dirs = sum(bool(DIRECTIONS.search(d["content"])) for d in group)
        steps = sum(bool(limit.search(d["title"] + " " + d["content"])) for d in group)
        echo = sum(_echoes_prompt(d["content"], examples) for d in group)
        cells.append([kind, len(group), f"{words:.1f}", dirs, steps, echo])
    header = [
        "kind",
        "items",
        "content words (mean)",
        "name directions",
        "name the step limit",
        "echo the prompt's example",
    ]
    print("\n" + table(header, cells, align="lrrrrr"))

    by_kind: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    for r in rows:
        kind = r["retrieved"][0]["source"] if r["retrieved"] else "nothing served"
        by_kind[kind].append((bool(r["success"]), bool(base[r["index"]]["success"])))
    cells = [
        [kind, len(pairs), sum(a for a, _ in pairs), sum(b for _, b in pairs)]
        for kind, pairs in sorted(by_kind.items())
    ]
    header = ["top item served", "tasks", "won with memory", f"won by {args.baseline} on the same tasks"]
    print("\n" + table(header, cells, align="lrrr"))

    def per_call(records):
        return sum(r["agent_prompt_tokens"] for r in records) / max(1, sum(r["agent_calls"] for r in records))

    agent = sum(r["agent_prompt_tokens"] for r in rows)
    played = [base[r["index"]] for r in rows]
    if not agent or not per_call(played):
        print("\nthe LM reported no token counts: no cost figures")
        return
    loop = sum(r["loop_prompt_tokens"] for r in rows) / agent
    print(
        f"\nagent prompt tokens per call: {per_call(rows):.0f} with memory, {per_call(played):.0f} without "
        f"(+{per_call(rows) / per_call(played) - 1:.0%}); memory loop prompt tokens: +{loop:.0%} of the agent's"
    )


if __name__ == "__main__":
    main()
