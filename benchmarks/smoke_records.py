"""The bench's smoke streams on the scripted LM, every arm's actions per task: what a change to the
agent or the map changed in what is played, where the LM always answers the same.

    python -m benchmarks.smoke_records OUT.json          # this revision
    python -m benchmarks.smoke_records --diff OLD.json NEW.json

Run it at two revisions (a `git worktree` of the older one on PYTHONPATH) and diff the files: the
tasks whose actions changed are listed with both.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
from pathlib import Path

STREAMS = {
    "twx-demo": {"env": "twx", "arms": "no-memory,reasoningbank,reasoningbank-improved"},
    "textworld-house": {
        "env": "textworld",
        "task_set": "house",
        "arms": "no-memory,reasoningbank-improved,own-walkthrough",
    },
    "textworld-house-starts": {
        "env": "textworld",
        "task_set": "house-starts",
        "arms": "no-memory,reasoningbank-improved,own-walkthrough",
    },
    "scienceworld-house": {
        "env": "scienceworld",
        "task_set": "house",
        "arms": "no-memory,reasoningbank-improved,own-walkthrough",
    },
}


def record(max_steps: int = 6) -> dict:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "bench"))
    from bench_testing import scripted_lm
    from rich.console import Console

    from rbdspy.bench import run_bench
    from rbdspy.bench.records import arm_path, read_records
    from rbdspy.memory.embedders import HashEmbedder

    out = {}
    for label, options in STREAMS.items():
        run = tempfile.mkdtemp()
        quiet = Console(file=io.StringIO())
        results = run_bench(
            scripted_lm(), HashEmbedder(dim=64), run, smoke=True, lm_name="dummy", mlflow=False,
            n_resamples=50, console=quiet, max_steps=max_steps, **options,
        )  # fmt: skip
        out[label] = {
            arm: [(r["task_id"], r["actions"], r["success"]) for r in read_records(arm_path(run, arm))]
            for arm in results["arms"]
        }
    return out


def diff(old: dict, new: dict) -> list[str]:
    lines = []
    for label in old:
        for arm, rows in old[label].items():
            if new.get(label, {}).get(arm) == rows:
                continue
            for before, after in zip(rows, new.get(label, {}).get(arm, []), strict=False):
                if before != after:
                    lines += [f"{label} {arm} {before[0]}", f"  before: {before[1]}", f"  after:  {after[1]}"]
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="smoke-records.json")
    parser.add_argument("--diff", nargs=2, metavar=("OLD", "NEW"))
    args = parser.parse_args(argv)
    if args.diff:
        old, new = (json.loads(Path(p).read_text()) for p in args.diff)
        print("\n".join(diff(old, new)) or "no task's actions changed")
        return
    Path(args.out).write_text(json.dumps(record(), indent=1))


if __name__ == "__main__":
    main()
