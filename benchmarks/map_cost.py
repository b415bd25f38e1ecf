"""What the per-world map costs as a world's history grows: the time to add one episode and to
offer one step, with 10, 100 and 1,000 episodes stored, no LM.

    python -m benchmarks.map_cost --episodes 10,100,1000

The episodes are the gold paths of a TextWorld house's train quests, typed by the adapter, played
over and over (as a long-lived bank would store them); each offer is asked for the first step of a
quest from its start, the map's procedures of that kind followed. Prints the median and the
95th percentile per size.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from rbdspy.envs import make_env
from rbdspy.envs.base import kind_of, play, world_of
from rbdspy.maps.experience import experience_of
from rbdspy.maps.guide import Guide
from rbdspy.maps.world_map import WorldMap


def episodes(env, quests: int) -> list:
    out = []
    for task in env.tasks("train", limit=quests):
        experience = experience_of(play(env, task, env.gold_path(task), places=True))
        steps = [s.model_copy(update={"act": env.parse_action(s.action)}) for s in experience.steps]
        out.append((task, experience.model_copy(update={"steps": steps})))
    return out


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    return f"{statistics.median(ordered) * 1000:.2f} / {ordered[int(0.95 * (len(ordered) - 1))] * 1000:.2f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", default="10,100,1000")
    parser.add_argument("--quests", type=int, default=20)
    args = parser.parse_args(argv)
    env = make_env("textworld")
    played = episodes(env, args.quests)
    print(f"command: python -m benchmarks.map_cost {' '.join(argv if argv is not None else sys.argv[1:])}")
    print("| episodes stored | add one episode, ms (median / p95) | offer one step, ms (median / p95) |")
    print("|---:|---:|---:|")
    for size in (int(n) for n in args.episodes.split(",")):
        world = WorldMap(world_of(env, played[0][0]))
        adds: list[float] = []
        for n in range(size):
            started = time.perf_counter()
            world.add(played[n % len(played)][1])
            adds.append(time.perf_counter() - started)
        offers: list[float] = []
        for task, _ in played:
            first = env.reset(task)
            where = first.whereabouts
            listed = [(env.parse_action(a), a) for a in first.admissible]
            started = time.perf_counter()
            guide = Guide(
                world, first.task_description, kind_of(env, task), where.place, where.in_view, where.carrying, True
            )
            guide.offer(listed)
            offers.append(time.perf_counter() - started)
        print(f"| {size} | {_ms(adds[-len(played) :])} | {_ms(offers)} |")


if __name__ == "__main__":
    main()
