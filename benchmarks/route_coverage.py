"""Could memory have shown the way? Routes the agent's own past episodes offer on a house stream.

    python -m benchmarks.route_coverage --run docs/bench/house-a-local --arm no-memory

No LM. It replays the arm's episodes of a house run in stream order (each through the run's own
world, noting what is in view as EnvAgent does) and, before each task, asks the route reader
(`rbdspy.envs.memory_routes.route`) for the way to the task's first thing (to fetch) and its
second (to bring it to), from the records the earlier episodes would have written under three
designs: the actions of won episodes (the environment's labels), the actions of every episode,
and the actions and places of every episode (`action_record="every"`). Records are taken as the
k most similar by the task's text (the bank's own retrieval also re-ranks; this measures what the
memory holds, not how it is ranked). A route counts as right when, played from a fresh start,
it ends where the thing can be looked at; one with no move is the start room (nothing to show).

It separates "the memory holds no way there" from "the agent did not follow a way it was
offered": read it beside the run's success of the route arms.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from rbdspy.action_text import move_of, places, sequences
from rbdspy.bench import tables
from rbdspy.envs.base import play
from rbdspy.envs.memory_routes import names, route, task_things
from rbdspy.envs.task_sets import open_task_set
from rbdspy.lessons.action_record import action_record
from rbdspy.lm.factory import make_embedder
from rbdspy.memory.formatting import format_memory_block

DESIGNS = {
    "won episodes' actions": dict(every=False, places=False),
    "every episode's actions": dict(every=True, places=False),
    "every episode's actions and places": dict(every=True, places=True),
}


def leads_there(env, task_id: str, way: list[str], thing: frozenset[str]) -> bool:
    env.reset(task_id)
    if way and not move_of(way[-1]) and names(way[-1], thing):
        way = way[:-1]  # a fetch ends with the taking: check it can be played there
    for action in way:
        env.step(action)
    return any(names(a, thing) for a in env.admissible_actions())


def coverage(run: Path, arm: str, ks: list[int], embedder, environment=None) -> dict:
    """Counts per (design, k): [found, right, with a move] for the first thing, then the second.
    `environment` is the run's world already open (tests); by default it is opened and closed."""
    config = json.loads((run / "config.json").read_text())
    rows = {r["index"]: r for r in map(json.loads, (run / "arms" / f"{arm}.jsonl").open())}
    env = environment or open_task_set(
        "textworld", config["config"]["task_set"], world_seed=config["config"].get("world_seed")
    )
    counts = {(d, k): [0] * 6 for d in DESIGNS for k in ks}  # found/right/with a move, first then second
    records: list[tuple[str, str, dict, np.ndarray]] = []  # title, content, design flags, vector
    tasks = 0
    try:
        for task in config["stream"]:
            row = rows.get(task["index"])
            if row is None:
                break
            text = env.describe(task["task_id"])
            things = task_things(text)[:2]
            if records and things:
                tasks += 1
                query = np.asarray(embedder([text]))[0]
                for design, flags in DESIGNS.items():
                    kept = [r for r in records if r[2] == flags]
                    order = sorted(kept, key=lambda r: -float(np.dot(query, r[3])))
                    for k in ks:
                        block = format_memory_block(
                            [{"title": t, "description": "-", "content": c} for t, c, _, _ in order[:k]]
                        )
                        for position, thing in enumerate(things):
                            way = route(sequences(block), thing, position == 0, places(block))
                            if way is None:
                                continue
                            tally = counts[(design, k)]
                            tally[3 * position] += 1
                            tally[3 * position + 1] += leads_there(env, task["task_id"], way, thing)
                            tally[3 * position + 2] += any(move_of(a) for a in way)
            trajectory = play(env, task["task_id"], row["actions"], things=True)
            for flags in DESIGNS.values():
                if not flags["every"] and not row["success"]:
                    continue
                record = action_record(text, trajectory, won=row["success"], places=flags["places"])
                if record is not None:
                    vector = np.asarray(embedder([record.title]))[0]
                    records.append((record.title, record.content, flags, vector / np.linalg.norm(vector)))
    finally:
        if environment is None:
            env.close()
    return {"tasks": tasks, "counts": counts}


def main(argv: list[str] | None = None, environment=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=Path, required=True, help="a house bench run (its config.json and arms/)")
    parser.add_argument("--arm", default="no-memory", help="whose episodes are remembered")
    parser.add_argument("--k", default="1,3,100", help="records served per task, comma list")
    parser.add_argument("--embedder", default="local", help="local | hash (ranks records by the task's text)")
    args = parser.parse_args(argv)
    ks = [int(k) for k in args.k.split(",")]
    result = coverage(args.run, args.arm, ks, make_embedder(args.embedder), environment)
    n = result["tasks"]
    print(f"{n} tasks of {args.run} ({args.arm}'s episodes remembered, in stream order)\n")
    header = ["records", "k", "first thing: route / right / with a move", "second thing: route / right / with a move"]
    lines = []
    for (design, k), c in result["counts"].items():
        lines.append([design, str(k), f"{c[0]} / {c[1]} / {c[2]}", f"{c[3]} / {c[4]} / {c[5]}"])
    print(tables.table(header, lines, align="lrrr"))
    cmd = tables.benchmark_command("route_coverage", f"--run {args.run}", f"--arm {args.arm}", f"--k {args.k}")
    print("\n" + tables.reproduce_line(cmd))
    return result


if __name__ == "__main__":
    main()
