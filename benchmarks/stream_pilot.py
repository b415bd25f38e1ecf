"""Pilot for choosing a benchmark stream: how often the bare agent (EnvAgent, no memory) wins
candidate task families on their *train* variations, so that the measured stream is one where
memory has room to help (the bare agent wins sometimes, not always: roughly 20-70%) and where a
strategy from one variation can carry to the next. Dev variations are never played here.

    python -m benchmarks.stream_pilot [--lm local] [--per-family 6] [--max-steps 10]

Prints, per candidate family: wins, mean steps, mean steps of wins, seconds per task.
"""

from __future__ import annotations

import argparse
import time

import dspy

from rbdspy.agent import EnvAgent
from rbdspy.bench.tables import benchmark_command, table, table_row
from rbdspy.envs import make_env
from rbdspy.lm import make_lm

# (label, environment, game or task type, TextWorld-Express parameters)
CANDIDATES = [
    ("coin 3 rooms, open", "twx", "coin", "numLocations=3,numDistractorItems=0,includeDoors=0"),
    ("coin 4 rooms, doors", "twx", "coin", "numLocations=4,numDistractorItems=0,includeDoors=1"),
    ("twc 1 room, 2 items", "twx", "twc", "numLocations=1,numItemsToPutAway=2,includeDoors=0"),
    ("twc 2 rooms, doors", "twx", "twc", "numLocations=2,numItemsToPutAway=1,includeDoors=1"),
    (
        "cooking 1 room, 1 ingredient",
        "twx",
        "cookingworld",
        "numLocations=1,numIngredients=1,numDistractorItems=0,includeDoors=0",
    ),
    ("find-plant", "scienceworld", "find-plant", None),
    ("coin 3 rooms, doors", "twx", "coin", "numLocations=3,numDistractorItems=0,includeDoors=1"),
    ("twc 2 rooms, open", "twx", "twc", "numLocations=2,numItemsToPutAway=1,includeDoors=0"),
]


def _env(kind: str, game: str, params: str | None):
    if kind == "twx":
        return make_env("twx", games=[game], params={game: params})
    return make_env("scienceworld")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lm", default="local")
    parser.add_argument("--per-family", type=int, default=6)
    parser.add_argument("--max-steps", type=int, default=10)
    parser.add_argument("--only", nargs="*", help="labels to run (default: all)")
    args = parser.parse_args()
    dspy.configure(lm=make_lm(args.lm), adapter=dspy.JSONAdapter())
    print(f"# Stream pilot: bare EnvAgent on train variations, lm {args.lm}, max {args.max_steps} steps")
    command = benchmark_command(
        "stream_pilot", f"--lm {args.lm}", f"--per-family {args.per_family}", f"--max-steps {args.max_steps}"
    )
    print(f"    {command}\n")
    print(table(["family", "wins", "steps", "steps (wins)", "s/task"], align="lrrrr"), flush=True)
    for label, kind, game, params in CANDIDATES:
        if args.only and label not in args.only:
            continue
        env = _env(kind, game, params)
        try:
            agent = EnvAgent(env, max_steps=args.max_steps)
            refs = env.tasks("train", [game], limit=args.per_family)
            wins, steps, win_steps, start = 0, [], [], time.perf_counter()
            for ref in refs:
                trajectory = agent(task=agent.describe(ref.id), memory="", task_id=ref.id).trajectory
                n = int(trajectory.metadata.get("n_steps", 0))
                steps.append(n)
                if trajectory.outcome:
                    wins += 1
                    win_steps.append(n)
            per_task = (time.perf_counter() - start) / max(1, len(refs))
            mean_win = f"{sum(win_steps) / len(win_steps):.1f}" if win_steps else "-"
            print(
                table_row(
                    [label, f"{wins}/{len(refs)}", f"{sum(steps) / len(steps):.1f}", mean_win, f"{per_task:.0f}"]
                ),
                flush=True,
            )
        finally:
            env.close()


if __name__ == "__main__":
    main()
