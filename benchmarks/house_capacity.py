"""How many quests each persistent TextWorld world holds: which `--world-seed` can host a house
stream of a given length.

    python -m benchmarks.house_capacity [--seeds 1-20] [--quests 66] [--cache DIR]

For each seed the world's catalogue is generated (`HouseCatalogue.fill`) up to `--quests` quests or
until the world is out of them; the default asks for the quests a 60-task stream of 20 built and 40
measured can draw (DEFAULT_POOL: the catalogue up to its 40th dev quest). Catalogues and compiled
games land in the usual cache (`RBDSPY_TEXTWORLD_CACHE`), so a bench run on a measured seed starts
at once. Prints one row per seed: quests held, whether the full pool fits, the longest walkthrough
the catalogue needed, seconds, and why generation stopped.
"""

from __future__ import annotations

import argparse
import time

from rbdspy.bench.tables import benchmark_command, table, table_row
from rbdspy.envs.textworld_env import DEFAULT_POOL
from rbdspy.envs.textworld_house import HouseCatalogue, HouseSpec, catalogue_position


def full_pool_quests(pool: dict[str, int] = DEFAULT_POOL) -> int:
    """The catalogue length a stream drawing every quest of `pool` needs."""
    return max(catalogue_position(split, n - 1) + 1 for split, n in pool.items() if n)


def parse_seeds(text: str) -> list[int]:
    """ "1-20" or "1,3,7" (or both: "1-5,9") as a list of seeds."""
    seeds: list[int] = []
    for part in text.split(","):
        low, _, high = part.strip().partition("-")
        seeds += list(range(int(low), int(high or low) + 1))
    return seeds


def measure(seed: int, n_quests: int, cache: str | None) -> list[object]:
    """One row: the seed, the quests it holds (of `n_quests`), whether that is all of them, the
    longest walkthrough, seconds, and why generation stopped."""
    start = time.perf_counter()
    catalogue = HouseCatalogue(seed, HouseSpec(), cache)
    held = catalogue.fill(n_quests)
    longest = max((len(q.walkthrough) for q in catalogue.quests()[:n_quests]), default=0)
    stopped = catalogue.stop_reason() if held < n_quests else ""
    fits = "yes" if held >= n_quests else "no"
    return [seed, min(held, n_quests), fits, longest, f"{time.perf_counter() - start:.0f}", stopped]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", default="1-20", help="world seeds: a range (1-20), a list (1,3,7) or both")
    parser.add_argument("--quests", type=int, default=full_pool_quests(), help="quests asked of each world")
    parser.add_argument("--cache", default=None, help="catalogue cache (default: RBDSPY_TEXTWORLD_CACHE or ~/.cache)")
    args = parser.parse_args()
    seeds = parse_seeds(args.seeds)
    print(f"# House capacity: quests each world holds, of {args.quests} asked (the full pool of a 60-task stream)")
    print(f"    {benchmark_command('house_capacity', f'--seeds {args.seeds}', f'--quests {args.quests}')}\n")
    header = ["seed", "quests", "full pool", "longest walkthrough", "s", "stopped"]
    print(table(header, align="rrlrrl"), flush=True)
    hosting = []
    for seed in seeds:
        row = measure(seed, args.quests, args.cache)
        hosting += [seed] if row[2] == "yes" else []
        print(table_row(row), flush=True)
    print(f"\n{len(hosting)} of {len(seeds)} worlds hold {args.quests} quests: {', '.join(map(str, hosting))}")


if __name__ == "__main__":
    main()
