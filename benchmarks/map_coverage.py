"""How often the map offers the gold step, and how often what it offers is the gold step, with no
LM: tasks are played in turn by their gold paths; before each gold step the map of everything
played before in the world (every earlier gold path, stored as an episode) is asked for the next
step from wherever the task is; then the gold step is played and the task is added to the map.

    python -m benchmarks.map_coverage --env scienceworld --per-type 4
    python -m benchmarks.map_coverage --env scienceworld --per-type 4 --offset 4   # other variations
    python -m benchmarks.map_coverage --env textworld --tasks 20

Prints, per task type: tasks, gold steps, steps with an offer (coverage), offers equal to the gold
step (the same typed action: "examine X" = "look at X"), and that share of the offers (precision).
The tasks are train variations (ScienceWorld) or train quests (TextWorld): build tasks, where the
map may be developed; `--offset` draws later ones of the same split to check it on tasks it was
not developed on.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict

from rbdspy.envs import make_env
from rbdspy.envs.actions import same_act
from rbdspy.envs.base import interleave, kind_of, play, world_of
from rbdspy.maps.experience import experience_of
from rbdspy.maps.guide import Guide
from rbdspy.maps.world import WorldMap


def _tasks(env, args) -> list:
    if args.env == "textworld":
        return env.tasks("train", limit=args.offset + args.tasks)[args.offset :]
    types = args.types.split(",") if args.types else env.task_types()
    groups = [env.tasks("train", [t], limit=args.offset + args.per_type)[args.offset :] for t in types]
    return interleave(groups)


def _typed(env, episode):
    """The episode's experience with each action typed by the environment."""
    experience = experience_of(episode)
    steps = [s.model_copy(update={"act": env.parse_action(s.action)}) for s in experience.steps]
    return experience.model_copy(update={"steps": steps})


def measure(env, tasks, imperative: bool) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = defaultdict(lambda: {"tasks": 0, "gold_steps": 0, "offered": 0, "equal": 0})
    world = None
    for task in tasks:
        gold = env.gold_path(task)
        episode = play(env, task, gold, places=True)
        if world is None:
            world = WorldMap(world_of(env, task))
        kind = kind_of(env, task)
        first = env.reset(task)
        where = first.whereabouts
        guide = Guide(
            world,
            first.task_description,
            kind,
            where.place if where else None,
            where.in_view if where else (),
            where.carrying if where else (),
            imperative=imperative,
            answer_of=lambda act: env.answer_in(env.render_action(act)) if hasattr(env, "answer_in") else None,
        )
        row = counts[kind or "all"]
        listed = first.admissible
        for action in gold:
            offer = guide.offer([(env.parse_action(a), a) for a in listed])
            played = env.parse_action(action)
            row["gold_steps"] += 1
            row["offered"] += offer is not None
            row["equal"] += offer is not None and same_act(offer.act, played)
            result = env.step(action)
            where = result.whereabouts
            guide.played(
                played,
                result.valid,
                where.place if where else None,
                where.in_view if where else (),
                where.carrying if where else (),
            )
            listed = result.admissible
            if result.done:
                break
        row["tasks"] += 1
        world.add(_typed(env, episode))
    return dict(counts)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", choices=("textworld", "scienceworld"), default="scienceworld")
    parser.add_argument("--tasks", type=int, default=20, help="TextWorld: quests of world 1")
    parser.add_argument("--types", default="", help="ScienceWorld: task types (default all 30)")
    parser.add_argument("--per-type", type=int, default=4)
    parser.add_argument("--offset", type=int, default=0, help="skip this many tasks of each type first")
    args = parser.parse_args(argv)
    env = make_env(args.env)
    counts = measure(env, _tasks(env, args), imperative=env.language.imperative_tasks)
    print(f"command: python -m benchmarks.map_coverage {' '.join(argv if argv is not None else sys.argv[1:])}")
    print("| kind | tasks | gold steps | offered | = gold step | precision |")
    print("|---|---:|---:|---:|---:|---:|")
    total = {"tasks": 0, "gold_steps": 0, "offered": 0, "equal": 0}
    for kind, row in sorted(counts.items()):
        for key in total:
            total[key] += row[key]
        precision = f"{row['equal'] / row['offered']:.0%}" if row["offered"] else "-"
        print(f"| {kind} | {row['tasks']} | {row['gold_steps']} | {row['offered']} | {row['equal']} | {precision} |")
    precision = f"{total['equal'] / total['offered']:.0%}" if total["offered"] else "-"
    print(f"| all | {total['tasks']} | {total['gold_steps']} | {total['offered']} | {total['equal']} | {precision} |")


if __name__ == "__main__":
    main()
