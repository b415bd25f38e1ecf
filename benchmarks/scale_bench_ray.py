"""Ray fan-out of `rbdspy bench`: wall time of the same arms on 1 and on 2 Ray workers, with a
CPU-bound scripted LM.

    python -m benchmarks.scale_bench_ray [--arms reasoningbank,reasoningbank-k2] [--tasks 12]
                                         [--max-steps 4] [--burn 3000000] [--workers 1,2] [--local] [--quick]

The LM answers from a script (the bench tests' answers: the agent looks around, the judge says
success, the extractor writes one lesson) after `--burn` iterations of pure-Python arithmetic per
call, so the work is CPU-bound, holds the GIL, and is the same in every run: only the number of
Ray workers sharing it changes. The default arms are two banks that make the same calls per task,
so two workers can at best halve the time.

For each worker count a local cluster of that many CPUs is started and its workers are warmed
(rbdspy imported in each) before the clock starts; the timed part is `run_bench(...,
executor="ray")` from the first arm dispatched to the reports written, each worker opening its own
TextWorld-Express environment included. The records of every worker count are checked to be the
same (timings and random item ids aside). `--local` adds the in-process sequential run as a row.
The figures are only as good as the machine is idle: other work on its cores shrinks the speedup.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path

import dspy
from dspy.utils import DummyLM
from rich.console import Console

from rbdspy.bench import run_bench
from rbdspy.bench.arms import parse_arms
from rbdspy.bench.records import arm_path, read_records
from rbdspy.bench.tables import benchmark_command, reproduce_line, table

LESSON = {"title": "Check the room first", "description": "When a task starts.", "content": "Look around first."}
# Keyed on the output-field instruction only one kind of call carries (dict order decides).
ANSWERS = {
    "fields: `rationale`, then `verdict`": {"rationale": "the goal was met", "verdict": "success"},
    "fields: `lessons`": {"lessons": [LESSON]},
    "fields: `action`": {"action": "look around"},
}
QUICK = {"tasks": 2, "max_steps": 2, "burn": 100_000}
ITEM_ID = re.compile(r"\b[0-9a-f]{32}\b")


def burn(iterations: int) -> int:
    """Deterministic pure-Python work: no I/O, no C extension releasing the GIL."""
    x = 0
    for i in range(iterations):
        x = (x * 31 + i) % 1_000_003
    return x


class BurningEngine:
    """A DSPy engine (`dspy.LM(..., engine=...)`): `burn` iterations, then the scripted answer."""

    def __init__(self, answers: dict, iterations: int):
        self.iterations = iterations
        self._script = DummyLM(dict(answers), adapter=dspy.JSONAdapter())

    def complete(self, request):
        burn(self.iterations)
        return self._script._engine_spec.complete(request)

    def close(self) -> None:
        pass


def burning_lm(iterations: int) -> dspy.LM:
    return dspy.LM("scripted/cpu-bound", engine=BurningEngine(ANSWERS, iterations), cache=False)


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arms", default="reasoningbank,reasoningbank-k2")
    parser.add_argument("--tasks", type=int, default=12)
    parser.add_argument("--max-steps", type=int, default=4)
    parser.add_argument("--burn", type=int, default=3_000_000, help="Loop iterations per LM call.")
    parser.add_argument("--workers", default="1,2", help="Comma list of Ray worker counts to time.")
    parser.add_argument("--local", action="store_true", help="Also time the in-process sequential run.")
    parser.add_argument("--quick", action="store_true", help="Smoke size: 2 tasks x 2 steps, a light burn.")
    args = parser.parse_args(argv)
    if args.quick:
        for key, value in QUICK.items():
            setattr(args, key, value)
    args.worker_counts = [int(w) for w in args.workers.split(",") if w.strip()]
    return args


def _comparable(out: Path, arms: list[str]) -> tuple[str, int]:
    """The run's records without timings, item ids numbered in the order they first appear; and
    how many tasks ended in an error (a script that stopped matching the prompts)."""
    ids: dict[str, int] = {}
    rows = [{k: v for k, v in r.items() if k != "wall_s"} for arm in arms for r in read_records(arm_path(out, arm))]
    text = ITEM_ID.sub(lambda m: f"item-{ids.setdefault(m.group(), len(ids))}", json.dumps(rows, sort_keys=True))
    return text, sum(r["error"] is not None for r in rows)


def _warm(ray, workers: int) -> float:
    """Starts `workers` worker processes and imports rbdspy in each; returns the seconds it took."""

    def load():
        import os

        import rbdspy.bench.runner  # noqa: F401
        import rbdspy.envs.task_sets  # noqa: F401

        time.sleep(0.5)  # held long enough that the other warm-ups land on other workers
        return os.getpid()

    start = time.perf_counter()
    pids = ray.get([ray.remote(num_cpus=1)(load).remote() for _ in range(workers)])
    if len(set(pids)) != workers:
        print(f"note: the warm-up reached {len(set(pids))} of {workers} workers", file=sys.stderr)
    return time.perf_counter() - start


def _play(args, arms: list[str], environment, out: Path, executor: str, workers: int | None) -> float:
    start = time.perf_counter()
    run_bench(
        burning_lm(args.burn),
        _embedder(),
        out,
        arms=arms,
        n_tasks=args.tasks,
        max_steps=args.max_steps,
        environment=environment,
        mlflow=False,
        console=Console(file=io.StringIO()),
        n_resamples=200,
        executor=executor,
        workers=workers,
    )
    return time.perf_counter() - start


def _embedder():
    from rbdspy.memory.embedders import HashEmbedder

    return HashEmbedder(dim=64)


def reproduce(args) -> str:
    parts = []
    if args.quick:
        parts.append("--quick")
    else:
        parts += [f"--arms {shlex.quote(args.arms)}", f"--tasks {args.tasks}", f"--max-steps {args.max_steps}"]
        parts.append(f"--burn {args.burn}")
    if args.quick is False or args.worker_counts != [1, 2]:
        parts.append(f"--workers {','.join(map(str, args.worker_counts))}")
    return benchmark_command("scale_bench_ray", *parts, "--local" if args.local else "")


def main(argv: list[str] | None = None) -> dict:
    from rbdspy.envs.task_sets import open_task_set
    from rbdspy.ray_support import import_ray

    args = parse(argv)
    ray = import_ray()
    arms = parse_arms(args.arms)
    start = time.perf_counter()
    burn(args.burn)
    per_call = time.perf_counter() - start
    rows: list[dict] = []
    tmp = Path(tempfile.mkdtemp(prefix="scale-bench-ray-"))
    environment = open_task_set("twx", "demo")  # draws the stream; each Ray worker opens its own
    try:
        if args.local:
            out = tmp / "local"
            wall = _play(args, arms, environment, out, "local", None)
            rows.append({"run": "local (in-process)", "workers": 1, "wall_s": wall})
            rows[-1]["records"], rows[-1]["errors"] = _comparable(out, arms)
        for workers in args.worker_counts:
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
            try:
                warm_s = _warm(ray, workers)
                out = tmp / f"ray-{workers}"
                wall = _play(args, arms, environment, out, "ray", workers)
            finally:
                ray.shutdown()
            rows.append({"run": f"ray, {workers} worker(s)", "workers": workers, "wall_s": wall, "warm_s": warm_s})
            rows[-1]["records"], rows[-1]["errors"] = _comparable(out, arms)
    finally:
        environment.close()
        shutil.rmtree(tmp, ignore_errors=True)

    ray_rows = [r for r in rows if r["run"].startswith("ray")]
    base = next((r["wall_s"] for r in ray_rows if r["workers"] == 1), ray_rows[0]["wall_s"] if ray_rows else None)
    identical = len({r["records"] for r in rows}) == 1
    print(f"Arms: {', '.join(arms)}; {args.tasks} tasks x up to {args.max_steps} steps each")
    print(f"LM: scripted, {args.burn:,} loop iterations per call ({per_call:.3f} s per call measured here)\n")
    cells = [[row["run"], f"{row['wall_s']:.1f}", f"{base / row['wall_s']:.2f}x" if base else "-"] for row in rows]
    print(table(["run", "wall s", "speedup vs 1 Ray worker"], cells, align="lrr"))
    print(f"\nRecords identical across runs (timings and item ids aside): {'yes' if identical else 'NO'}")
    print(f"Tasks that ended in an error: {sum(r['errors'] for r in rows)}")
    print("Cluster start and worker warm-up are not timed: " + ", ".join(f"{r['warm_s']:.1f} s" for r in ray_rows))
    print(reproduce_line(reproduce(args)))
    for row in rows:
        row.pop("records")
    speedups = {r["workers"]: base / r["wall_s"] for r in ray_rows} if base else {}
    return {"rows": rows, "speedup": speedups, "identical": identical, "per_call_s": per_call}


if __name__ == "__main__":
    main()
