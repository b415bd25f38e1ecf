"""Environment throughput with the gold policy: steps/s, episode wall time, dataset build rate.

    python -m benchmarks.env_bench [--envs scienceworld twx] [--episodes 3] [--build 40] [--smoke]

For each adapter and a few task types, `--episodes` train tasks are played along their gold path
from a fresh reset. Reported per task type: the gold path length, the time to obtain the gold
path (ScienceWorld runs its oracle at load time; first call, uncached), the reset time, the
episode wall time (reset + every gold step, no admissible list: the replay path the dataset
builder uses), steps/s on that path (reset excluded), and steps/s when the admissible-action
list is computed after every step (what an agent episode pays per step before any LM time).
Then `build_dataset` is timed on `--build` records (gold successes and perturbed failures, every
record re-checked by replay).

With `--agent-lm local local-fast`, EnvAgent (JSONAdapter, constrained decoding) also plays
`--agent-episodes` tasks per model on the demo's task set (small TextWorld-Express games, or
ScienceWorld find-* tasks) with a `--agent-max-steps` limit, and the benchmark reports seconds
per step and per episode, prompt tokens per step, and the environment's success rate.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

from rbdspy.bench.tables import benchmark_command, reproduce_line, table
from rbdspy.datasets import build_dataset
from rbdspy.envs import make_env
from rbdspy.envs.base import Environment, TaskRef

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


def bench_agent(env_name: str, model: str, episodes: int, max_steps: int, lm=None) -> dict:
    """EnvAgent on `model` (or the given `lm`) over `episodes` demo tasks: seconds per step
    and per episode. Every LM call is a real one: DSPy's cache is off for the run."""
    import dspy

    from rbdspy.agent import EnvAgent
    from rbdspy.envs.task_sets import demo_tasks, open_demo_env
    from rbdspy.lm import make_lm

    lm = lm or make_lm(model)
    engine = getattr(lm, "engine", None)
    load_s = 0.0
    if engine is not None and hasattr(engine, "load"):
        t0 = time.perf_counter()
        engine.load()  # model load is reported apart, not charged to the first step
        load_s = time.perf_counter() - t0
    episode_s, steps, wins, prompt_tokens = [], [], 0, 0
    with open_demo_env(env_name) as env, dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        agent = EnvAgent(env, max_steps=max_steps)
        for task_id in demo_tasks(env, episodes):
            calls_before = len(lm.history)
            t0 = time.perf_counter()
            trajectory = agent(task=agent.describe(task_id), task_id=task_id).trajectory
            episode_s.append(time.perf_counter() - t0)
            steps.append(max(int(trajectory.metadata.get("n_steps", 0)), 1))
            wins += bool(trajectory.outcome)
            for entry in lm.history[calls_before:]:
                prompt_tokens += int((entry.get("usage") or {}).get("prompt_tokens", 0) or 0)
    return {
        "env": env_name,
        "model": model,
        "episodes": len(episode_s),
        "max_steps": max_steps,
        "load_s": load_s,
        "s_per_step": sum(episode_s) / sum(steps),
        "s_per_episode": statistics.mean(episode_s),
        "steps": statistics.mean(steps),
        "prompt_tokens_per_step": prompt_tokens / sum(steps),
        "success": wins / len(episode_s),
    }


# (title, row key, format) per column
AGENT_COLUMNS = [
    ("env", "env", "{}"),
    ("agent LM", "model", "{}"),
    ("episodes", "episodes", "{}"),
    ("step limit", "max_steps", "{}"),
    ("model load (s)", "load_s", "{:.1f}"),
    ("mean steps", "steps", "{:.1f}"),
    ("s/step", "s_per_step", "{:.2f}"),
    ("s/episode", "s_per_episode", "{:.1f}"),
    ("prompt tokens/step", "prompt_tokens_per_step", "{:,.0f}"),
    ("success", "success", "{:.0%}"),
]
TASK_TYPE_COLUMNS = [
    ("env", "env", "{}"),
    ("task type", "task_type", "{}"),
    ("episodes", "episodes", "{}"),
    ("gold steps", "steps", "{:.0f}"),
    ("gold path (s)", "gold_gen_s", "{:.2f}"),
    ("reset (ms)", "reset_ms", "{:.0f}"),
    ("episode wall (s)", "episode_s", "{:.3f}"),
    ("steps/s", "steps_per_s", "{:,.0f}"),
    ("steps/s with admissible", "steps_per_s_admissible", "{:,.1f}"),
    ("success", "success", "{:.0%}"),
]


def _columns_table(rows: list[dict], columns: list[tuple[str, str, str]]) -> str:
    cells = [[fmt.format(r[key]) for _, key, fmt in columns] for r in rows]
    return table([title for title, _, _ in columns], cells, align="llrrrrrrrr")


def _agent_table(rows: list[dict]) -> str:
    return _columns_table(rows, AGENT_COLUMNS)


def _table(rows: list[dict]) -> str:
    return _columns_table(rows, TASK_TYPE_COLUMNS)


def _build_table(rows: list[dict]) -> str:
    header = ["env", "task types", "records (success / failure)", "failures by kind", "discarded", "seconds"]
    header += ["records/min", "gold/min", "perturbed/min"]
    cells = []
    for r in rows:
        kinds = ", ".join(f"{k.removeprefix('gold_')} {v}" for k, v in r["by_kind"].items() if k != "gold")
        cells.append(
            [
                r["env"],
                r["types"],
                f"{r['written']} ({r['successes']} / {r['failures']})",
                kinds,
                r["discarded"],
                f"{r['seconds']:.1f}",
                f"{r['per_minute']:,.0f}",
                f"{r['gold_per_minute']:,.0f}",
                f"{r['perturbed_per_minute']:,.0f}",
            ]
        )
    return table(header, cells, align="lrrlrrrrr")


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", nargs="+", default=["scienceworld", "twx"], choices=["scienceworld", "twx"])
    parser.add_argument("--episodes", type=int, default=3, help="train tasks per task type")
    parser.add_argument("--build", type=int, default=40, help="records for the build_dataset timing (0: skip)")
    parser.add_argument("--smoke", action="store_true", help="one task type, one episode, 4 records per env")
    parser.add_argument(
        "--agent-lm",
        nargs="+",
        default=[],
        metavar="MODEL",
        help="also time EnvAgent on these LMs (e.g. local local-fast)",
    )
    parser.add_argument("--agent-episodes", type=int, default=3, help="agent episodes per LM and env")
    parser.add_argument("--agent-max-steps", type=int, default=8, help="step limit of the timed agent episodes")
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
        finally:
            env.close()
    if args.agent_lm:
        import dspy

        dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)  # time the model, not the cache
    agent_rows = [
        bench_agent(name, model, args.agent_episodes, args.agent_max_steps)
        for model in args.agent_lm
        for name in args.envs
    ]

    print(f"Environment benchmark, gold policy, train split, {episodes} episode(s) per task type.")
    print(
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}."
    )
    print("Simulator start (JVM): " + ", ".join(f"{k} {v:.1f} s" for k, v in starts.items()) + "\n")
    print(_table(rows))
    if build_rows:
        print(
            f"\nbuild_dataset (seed 0, {'the task types above' if args.smoke else 'all task types'}, "
            "every record re-checked by replay):\n"
        )
        print(_build_table(build_rows))
    if agent_rows:
        print("\nEnvAgent with a real LM (demo task set, JSONAdapter, temperature 0, DSPy cache off):\n")
        print(_agent_table(agent_rows))
    agent = (
        f"--agent-lm {' '.join(args.agent_lm)} --agent-episodes {args.agent_episodes} "
        f"--agent-max-steps {args.agent_max_steps}"
        if args.agent_lm
        else ""
    )
    command = benchmark_command(
        "env_bench",
        "--smoke" if args.smoke else f"--episodes {episodes} --build {n_build}",
        f"--envs {' '.join(args.envs)}",
        agent,
    )
    print(f"\n{reproduce_line(command)}")
    return rows + build_rows + agent_rows


if __name__ == "__main__":
    main()
