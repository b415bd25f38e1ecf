"""Environment throughput with the gold policy: steps/s, episode wall time, dataset build rate.

    python benchmarks/env_bench.py [--envs scienceworld twx] [--episodes 3] [--build 40] [--smoke]

For each adapter and a few task types, `--episodes` train tasks are played along their gold path
from a fresh reset. Reported per task type: the gold path length, the time to obtain the gold
path (ScienceWorld runs its oracle at load time; first call, uncached), the reset time, the
episode wall time (reset + every gold step, no admissible list: the replay path the dataset
builder uses), steps/s on that path (reset excluded), and steps/s when the admissible-action list is computed after every step (what an
agent episode pays per step before any LM time). Then `build_dataset` is timed on `--build`
records (gold successes and perturbed failures, every record re-checked by replay).

Agent seconds per step with a real LM come later: `--agent-lm` is reserved for it
(`bench_agent_seconds_per_step`) and is not implemented yet.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rbdspy.envs import build_dataset, make_env  # noqa: E402
from rbdspy.envs.base import Environment, TaskRef  # noqa: E402

DEFAULT_TYPES = {
    "scienceworld": ["boil", "find-animal", "power-component", "lifespan-longest-lived"],
    "twx": ["cookingworld", "coin", "twc", "mapreader"],
}
SMOKE_TYPES = {"scienceworld": ["lifespan-longest-lived"], "twx": ["coin"]}


def _play_gold(env: Environment, ref: TaskRef, gold: list[str], admissible: bool) -> tuple[float, float, int, bool]:
    """(reset seconds, seconds for the gold steps, steps played (stopping at done), success)."""
    t0 = time.perf_counter()
    env.reset(ref, admissible=admissible)
    t1 = time.perf_counter()
    steps = 0
    for action in gold:
        steps += 1
        if env.step(action, admissible=admissible).done:
            break
    return t1 - t0, time.perf_counter() - t1, steps, env.success


def bench_task_type(env: Environment, task_type: str, episodes: int) -> dict:
    refs = env.tasks("train", [task_type], limit=episodes)
    gen, resets, wall, replay_rate, agent_rate, lengths, wins = [], [], [], [], [], [], 0
    for ref in refs:
        t0 = time.perf_counter()
        gold = env.gold_path(ref)
        gen.append(time.perf_counter() - t0)
        reset_s, steps_s, steps, won = _play_gold(env, ref, gold, admissible=False)
        resets.append(reset_s)
        wall.append(reset_s + steps_s)
        replay_rate.append(steps / steps_s)
        lengths.append(steps)
        wins += won
        _, steps_s, steps, _ = _play_gold(env, ref, gold, admissible=True)
        agent_rate.append(steps / steps_s)
    return {
        "env": env.name,
        "task_type": task_type,
        "episodes": len(refs),
        "steps": statistics.mean(lengths),
        "gold_gen_s": statistics.mean(gen),
        "reset_ms": 1000 * statistics.mean(resets),
        "episode_s": statistics.mean(wall),
        "steps_per_s": statistics.mean(replay_rate),
        "steps_per_s_admissible": statistics.mean(agent_rate),
        "success": wins / len(refs),
    }


def bench_build(env: Environment, n: int, task_types: list[str] | None) -> dict:
    with tempfile.TemporaryDirectory(prefix="rbdspy-env-bench-") as tmp:
        report = build_dataset(env, "train", n, Path(tmp) / "d.jsonl", seed=0, progress=False, task_types=task_types)
    rates = report.records_per_minute_by_kind()
    perturbed_seconds = sum(t for k, t in report.seconds_by_kind.items() if k.startswith("gold_"))
    perturbed = sum(c for k, c in report.by_kind.items() if k.startswith("gold_"))
    return {
        "env": env.name,
        "gold_per_minute": rates.get("gold", 0.0),
        "perturbed_per_minute": 60.0 * perturbed / perturbed_seconds if perturbed_seconds else 0.0,
        "by_kind": report.by_kind,
        "written": report.written,
        "successes": report.successes,
        "failures": report.failures,
        "discarded": report.discarded_total,
        "seconds": report.seconds,
        "per_minute": report.records_per_minute,
        "types": len(task_types) if task_types else len(env.task_types()),
    }


def bench_agent_seconds_per_step(env: Environment, model: str) -> dict:
    """Agent seconds per step with a real LM (`--agent-lm`). Not implemented yet: to be added
    with the local LM engine."""
    raise NotImplementedError("agent timing with a real LM is not implemented yet (--agent-lm is reserved for it)")


def _table(rows: list[dict]) -> str:
    lines = [
        "| env | task type | episodes | gold steps | gold path (s) | reset (ms) | episode wall (s) | steps/s | steps/s with admissible | success |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['env']} | {r['task_type']} | {r['episodes']} | {r['steps']:.0f} | {r['gold_gen_s']:.2f} | {r['reset_ms']:.0f} | "
            f"{r['episode_s']:.3f} | {r['steps_per_s']:,.0f} | {r['steps_per_s_admissible']:,.1f} | {r['success']:.0%} |"
        )
    return "\n".join(lines)


def _build_table(rows: list[dict]) -> str:
    lines = [
        "| env | task types | records (success / failure) | failures by kind | discarded | seconds | records/min | gold/min | perturbed/min |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        kinds = ", ".join(f"{k.removeprefix('gold_')} {v}" for k, v in r["by_kind"].items() if k != "gold")
        lines.append(
            f"| {r['env']} | {r['types']} | {r['written']} ({r['successes']} / {r['failures']}) | {kinds} | {r['discarded']} | "
            f"{r['seconds']:.1f} | {r['per_minute']:,.0f} | {r['gold_per_minute']:,.0f} | {r['perturbed_per_minute']:,.0f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", nargs="+", default=["scienceworld", "twx"], choices=["scienceworld", "twx"])
    parser.add_argument("--episodes", type=int, default=3, help="train tasks per task type")
    parser.add_argument("--build", type=int, default=40, help="records for the build_dataset timing (0: skip)")
    parser.add_argument("--smoke", action="store_true", help="one task type, one episode, 4 records per env")
    parser.add_argument("--agent-lm", default=None, metavar="MODEL", help="reserved: agent seconds per step with this LM (not implemented yet)")
    args = parser.parse_args(argv)
    if args.episodes < 1 or args.build < 0:
        parser.error("--episodes must be at least 1 and --build 0 or more")
    types = SMOKE_TYPES if args.smoke else DEFAULT_TYPES
    episodes, n_build = (1, 4) if args.smoke else (args.episodes, args.build)

    rows, build_rows, starts = [], [], {}
    for name in args.envs:
        t0 = time.perf_counter()
        env = make_env(name)
        starts[name] = time.perf_counter() - t0
        try:
            rows.extend(bench_task_type(env, task_type, episodes) for task_type in types[name])
            if n_build:
                # Builder timing over all task types (interleaved), as `rbdspy data build` runs it.
                build_rows.append(bench_build(env, n_build, types[name] if args.smoke else None))
            if args.agent_lm:
                bench_agent_seconds_per_step(env, args.agent_lm)
        finally:
            env.close()

    print(f"Environment benchmark, gold policy, train split, {episodes} episode(s) per task type.")
    print(f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}.")
    print("Simulator start (JVM): " + ", ".join(f"{k} {v:.1f} s" for k, v in starts.items()) + "\n")
    print(_table(rows))
    if build_rows:
        print(f"\nbuild_dataset (seed 0, {'the task types above' if args.smoke else 'all task types'}, every record re-checked by replay):\n")
        print(_build_table(build_rows))
    command = "python benchmarks/env_bench.py " + (
        "--smoke" if args.smoke else f"--episodes {episodes} --build {n_build}"
    ) + f" --envs {' '.join(args.envs)}"
    print(f"\nReproduce: {command}")
    return rows + build_rows


if __name__ == "__main__":
    main()
