"""Lesson quality, before and after: the extractor prompts a bank can ship, run on the same
labelled *train* trajectories and scored by the lesson metric (rbdspy/optimizers/metrics.py:
format with a 40-word cap, general, actionable, cause), with every lesson printed.

    python -m benchmarks.lesson_quality [--lm local] [--data datasets/twx-train.jsonl] [--limit 6]
        [--compiled OLD_EXTRACTORS_JSON]

The extractors rbdspy shipped before the lesson rework can be compared with
`git show 3780fe1:rbdspy/compiled/extractors.json > /tmp/v1-extractors.json` and
`--compiled /tmp/v1-extractors.json`.

"hand-written" is the Extractor's own prompts; "compiled" loads a compiled extractor JSON (its
instructions and demos replace the hand-written ones). Records are drawn balanced by label with
a fixed seed. A demo from one environment showing up in lessons about another (a leak) is visible
in the printed lessons.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import dspy

from rbdspy.bench.tables import benchmark_command, table
from rbdspy.datasets.dataset import load_records
from rbdspy.lessons.extractor import Extractor
from rbdspy.lm import make_lm
from rbdspy.optimizers.examples import balanced_sample, make_examples
from rbdspy.optimizers.metrics import combine, lesson_parts


def _extractor(compiled: str | None) -> Extractor:
    extractor = Extractor()
    if compiled:
        extractor.load(compiled)
    return extractor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lm", default="local")
    parser.add_argument("--data", nargs="+", default=["datasets/twx-train.jsonl"])
    parser.add_argument("--limit", type=int, default=6)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--compiled", default=None, help="a compiled extractor JSON to compare")
    args = parser.parse_args()
    records = balanced_sample([r for path in args.data for r in load_records(path)], args.limit, args.seed)
    examples = make_examples("extractors", records)
    dspy.configure(lm=make_lm(args.lm), adapter=dspy.JSONAdapter())
    print(f"# Lesson quality on {len(examples)} train records of {', '.join(args.data)}, lm {args.lm}")
    compared = f"--compiled {args.compiled}" if args.compiled else ""
    command = benchmark_command(
        "lesson_quality", f"--lm {args.lm}", f"--limit {args.limit}", f"--data {' '.join(args.data)}", compared
    )
    print(f"    {command}\n")
    if args.compiled and not Path(args.compiled).is_file():
        parser.error(f"--compiled {args.compiled}: no such file")
    variants = {"compiled": args.compiled, "hand-written": None} if args.compiled else {"hand-written": None}
    summary = []
    for name, compiled in variants.items():
        extractor, scores, start = _extractor(compiled), [], time.perf_counter()
        print(f"## {name}{f' ({compiled})' if compiled else ''}\n")
        for gold in examples:
            pred = extractor(**gold.inputs())
            parts = lesson_parts(gold, pred)
            scores.append(combine(parts))
            detail = ", ".join(f"{k} {v:.2f}" for k, (v, _) in parts.items())
            print(f"- {gold.task_id} ({gold.label}): score {scores[-1]:.2f} ({detail})")
            for lesson in pred.lessons:
                print(f"    - **{lesson.title}**: {lesson.description} {lesson.content}")
        seconds = (time.perf_counter() - start) / max(1, len(examples))
        summary.append((name, sum(scores) / max(1, len(scores)), seconds))
        print()
    cells = [[name, f"{score:.3f}", f"{seconds:.0f}"] for name, score, seconds in summary]
    print(table(["extractor prompts", "mean lesson score", "s/record"], cells, align="lrr"))


if __name__ == "__main__":
    main()
