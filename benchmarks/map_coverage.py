"""How often the map offers the gold step, with no LM: every earlier task's gold path is replayed
as a past episode of the world, then before each gold step of the next task the map's suggester
is asked for the next step (from wherever that task starts).

    python -m benchmarks.map_coverage --env textworld --tasks 10
    python -m benchmarks.map_coverage --env scienceworld --per-type 6

Prints, per environment: gold steps, steps with a suggestion, suggestions equal to the gold step
(the same action in other words counts: "open kitchen door" = "open door to kitchen"), and the
wins of a player that plays every suggestion and the gold step otherwise would be the gold path's.
"""

from __future__ import annotations

import argparse
import sys

from rbdspy.envs import make_env
from rbdspy.envs.base import interleave, kind_of, play, world_of
from rbdspy.maps.experience import experience_of
from rbdspy.maps.suggester import MapSuggester
from rbdspy.maps.words import same_action
from rbdspy.maps.world_map import WorldMap


def _tasks(env, args) -> list:
    if args.env == "textworld":
        return env.tasks("train", limit=args.tasks)
    types = args.types.split(",")
    return interleave([env.tasks("train", [t], limit=args.per_type) for t in types])


def measure(env, tasks) -> dict[str, int]:
    counts = {"tasks": 0, "gold_steps": 0, "suggested": 0, "equal": 0}
    past = []
    for task in tasks:
        gold = env.gold_path(task)
        episode = play(env, task, gold, places=True)
        world = WorldMap(past, world=world_of(env, task))
        first = episode.steps[0].metadata.get("whereabouts") or {}
        suggester = MapSuggester(
            world,
            env.describe(task),
            first.get("place"),
            first.get("in_view", []),
            first.get("carrying", []),
            kind=kind_of(env, task),
        )
        env.reset(task, admissible=False)
        for action in gold:
            admissible = env.admissible_actions()
            offered = suggester.suggest(admissible)
            counts["gold_steps"] += 1
            counts["suggested"] += offered is not None
            counts["equal"] += offered is not None and same_action(offered, action)
            result = env.step(action, admissible=False)
            suggester.played_from(action, result.valid, result.whereabouts)
            if result.done:
                break
        counts["tasks"] += 1
        experience = experience_of(episode)
        if experience is not None:
            past.append(experience)
    return counts


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", choices=("textworld", "scienceworld", "twx"), default="textworld")
    parser.add_argument("--tasks", type=int, default=10)
    parser.add_argument("--types", default="find-living-thing,find-plant,find-animal,power-component,boil")
    parser.add_argument("--per-type", type=int, default=6)
    args = parser.parse_args(argv)
    env = make_env(args.env)
    counts = measure(env, _tasks(env, args))
    print(f"command: python -m benchmarks.map_coverage {' '.join(argv if argv is not None else sys.argv[1:])}")
    print("| env | tasks | gold steps | steps with a suggestion | suggestion = gold step |")
    print("|---|---:|---:|---:|---:|")
    print(f"| {args.env} | {counts['tasks']} | {counts['gold_steps']} | {counts['suggested']} | {counts['equal']} |")


if __name__ == "__main__":
    main()
