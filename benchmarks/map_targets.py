"""Which thing does a task ask the map for: the data rule (`rbdspy.maps.targets`) against the LM's
choice (`rbdspy.maps.TargetChooser`), with no agent. Every earlier task's gold path is replayed as
a past episode of the world; then, for each task, each chooser names its first target, and a
choice is right when the map would go first to the place where the task's gold path first takes
or focuses on a thing.

    python -m benchmarks.map_targets --env scienceworld --per-type 6 --lm local
    python -m benchmarks.map_targets --env textworld --tasks 20 --lm local

Prints, per chooser: tasks, tasks whose place the map knew (answerable), right first places, and
the LM's calls and prompt tokens.
"""

from __future__ import annotations

import argparse
import sys

import dspy

from rbdspy.envs import make_env
from rbdspy.envs.base import interleave, kind_of, play, world_of
from rbdspy.envs.task_sets import SW_HOUSE_TYPES
from rbdspy.maps.experience import experience_of
from rbdspy.maps.lm_targets import TargetChooser
from rbdspy.maps.targets import task_targets
from rbdspy.maps.world_map import WorldMap
from rbdspy.types import Experience


def _tasks(env, args) -> list:
    if args.env == "textworld":
        return env.tasks(args.split, limit=args.tasks)
    types = args.types.split(",")
    return interleave([env.tasks(args.split, [t], limit=args.per_type) for t in types])


def first_handled_place(experience: Experience) -> str | None:
    """Where the episode first took a thing into hand or gave one as the task's answer (the
    environment's `answer_in`): the place the task's thing was."""
    carrying = set(experience.carrying)
    for step in experience.steps:
        took = step.accepted and bool(set(step.carrying) - carrying)
        if step.accepted and (took or step.answered):
            return step.place
        carrying = set(step.carrying)
    return None


def first_place(targets) -> str | None:
    return targets[0].places[0] if targets and targets[0].places else None


def measure(env, tasks, chooser: TargetChooser | None) -> tuple[dict[str, int], list[dict]]:
    counts = {"tasks": 0, "answerable": 0, "data_right": 0, "lm_right": 0}
    rows, past = [], []
    for task in tasks:
        experience = experience_of(play(env, task, env.gold_path(task), places=True))
        if experience is None:
            continue
        world = WorldMap(past, world=world_of(env, task))
        expected = first_handled_place(experience)
        text = env.describe(task)
        data = first_place(task_targets(text, world, kind_of(env, task)))
        row = {"task": str(task), "expected": expected, "data": data}
        if chooser is not None:
            pred = chooser(task=text, world=world)
            row |= {"lm": first_place(pred.targets), "chosen": pred.chosen}
        counts["tasks"] += 1
        if expected is not None and expected in world.places:
            counts["answerable"] += 1
            counts["data_right"] += data == expected
            counts["lm_right"] += row.get("lm") == expected
        rows.append(row)
        past.append(experience)
    return counts, rows


def main(argv: list[str] | None = None) -> dict[str, int]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", choices=("textworld", "scienceworld"), default="scienceworld")
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--types", default=",".join(SW_HOUSE_TYPES))
    parser.add_argument("--per-type", type=int, default=6)
    parser.add_argument("--split", default="train")
    parser.add_argument("--lm", default="", help="local | any LiteLLM model string; none: the data rule alone")
    parser.add_argument("--verbose", action="store_true", help="one line per task")
    args = parser.parse_args(argv)
    env = make_env(args.env)
    chooser, lm = None, None
    if args.lm:
        from rbdspy.lm import make_lm

        lm = make_lm(args.lm)
        chooser = TargetChooser()
    try:
        with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
            counts, rows = measure(env, _tasks(env, args), chooser)
    finally:
        env.close()
    if args.verbose:
        for row in rows:
            print(row)
    calls = sum(1 for _ in (lm.history if lm is not None else []))
    tokens = sum((h.get("usage") or {}).get("prompt_tokens", 0) for h in (lm.history if lm is not None else []))
    print(f"command: python -m benchmarks.map_targets {' '.join(argv if argv is not None else sys.argv[1:])}")
    print("| env | tasks | answerable | data rule right | LM right | LM calls | LM prompt tokens |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    lm_right = counts["lm_right"] if chooser is not None else "-"
    print(
        f"| {args.env} | {counts['tasks']} | {counts['answerable']} | {counts['data_right']} | {lm_right} "
        f"| {calls} | {tokens} |"
    )
    return counts


if __name__ == "__main__":
    main()
