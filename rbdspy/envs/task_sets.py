"""The small task sets that `rbdspy demo` and `rbdspy bench` play, and the environment that
serves them.

TextWorld-Express games are made small (one to three rooms, no distractors) and ScienceWorld is
restricted to task types with short gold paths, so that a 1.5B local model can finish some of
them within a demo's step limit. Task types are interleaved (twc, coin, cookingworld, twc, ...)
so that every task after the first round has a lesson from its own kind to retrieve.
"""

from __future__ import annotations

from typing import Any

from rbdspy.envs import make_env
from rbdspy.envs.base import Environment, interleave

# Small games: a handful of gold steps each (twc 3, coin 1-4, cookingworld ~10).
TWX_DEMO_PARAMS = {
    "twc": "numLocations=1,numItemsToPutAway=1,includeDoors=0",
    "coin": "numLocations=3,numDistractorItems=0,includeDoors=0",
    "cookingworld": "numLocations=1,numIngredients=1,numDistractorItems=0,includeDoors=0",
}
# ScienceWorld task types whose gold paths are short enough for a demo's step budget.
SW_DEMO_TYPES = ("find-living-thing", "find-plant", "find-animal")
# ScienceWorld's house stream (`--env scienceworld --task-set house`): every task is played in the
# same house (rooms, doors, fixed appliances; the start room varies), over task types whose gold
# paths are short and cross rooms, so that where things are and which door leads where carry over.
# Each asks for one thing and commits it with "focus on" (power-component, a wiring puzzle, and
# boil are left to the task-type benchmarks: their gold paths are long or puzzles).
SW_HOUSE_TYPES = (
    "find-non-living-thing",
    "find-living-thing",
    "find-plant",
    "find-animal",
    "lifespan-longest-lived",
    "lifespan-shortest-lived",
)
# The environments `rbdspy demo --env` and `rbdspy bench --env` take, one vocabulary named as the
# adapters are (`rbdspy.envs.ENV_NAMES`), the demo's default first: persistent TextWorld worlds
# (the demo plays quests in one of them, the house, that fetch the same thing, so a later quest is
# served the route an earlier one took, see `house_demo_tasks`; the bench plays the task sets
# "house": quests in one world that persists; "house-shuffled": every task in a world of its own;
# "house-starts" and "house-starts-shuffled": the same, each quest starting in a room of its own
# instead of the world's start room), TextWorld-Express, ScienceWorld.
ENVS = ("textworld", "twx", "scienceworld")
# Spellings `--env` took before it was one vocabulary: refused with the name to use instead.
RENAMED_ENVS = {"house": "textworld"}
# Named task sets for `rbdspy bench --task-set`: TextWorld-Express games with their parameters,
# and ScienceWorld task types. "lift" is a stream where memory has room to help: games the bare
# agent wins sometimes but not always (one it never wins gives memory no success to learn from,
# one it always wins nothing to lift), where a strategy learned on one variation applies to the
# next. Coin in four rooms behind closed doors, in 15 steps, is such a game for the bare 1.5B
# agent, and every game asks for the same skills (open the door, go through, look, take the coin).
# ScienceWorld's find-* types serve the lift set there. Measured:
# docs/results/memory.md#a-stream-where-memory-has-room-to-help-benchmarksstream_pilotpy
LIFT_TWX_PARAMS = {"coin": "numLocations=4,numDistractorItems=0,includeDoors=1"}
TASK_SETS: dict[str, dict[str, Any]] = {
    "demo": {"twx": TWX_DEMO_PARAMS, "scienceworld": SW_DEMO_TYPES},
    "lift": {"twx": LIFT_TWX_PARAMS, "scienceworld": SW_DEMO_TYPES},
    "house": {"textworld": {"shuffled": False}, "scienceworld": SW_HOUSE_TYPES},
    "house-shuffled": {"textworld": {"shuffled": True}},
    "house-starts": {"textworld": {"shuffled": False, "starts": True}},
    "house-starts-shuffled": {"textworld": {"shuffled": True, "starts": True}},
}

__all__ = [
    "ENVS",
    "RENAMED_ENVS",
    "SW_DEMO_TYPES",
    "TASK_SETS",
    "TWX_DEMO_PARAMS",
    "demo_task_types",
    "demo_tasks",
    "env_name",
    "open_demo_env",
    "open_task_set",
]


def env_name(name: str) -> str:
    """`name` when it names an environment of `ENVS`; a ValueError in one line otherwise, naming
    the spelling to use for an old one ("house" is a world of textworld)."""
    if name in ENVS:
        return name
    if name in RENAMED_ENVS:
        raise ValueError(f"{name!r} is now spelled {RENAMED_ENVS[name]}")  # one line, even in an 80-column box
    raise ValueError(f"unknown environment {name!r}; choose one of {', '.join(ENVS)}")


def env_for_task_set(task_set: str, env: str | None = None) -> str:
    """The environment `task_set` is played in: `env` when given (and the set has games there),
    else the first the set names (twx for demo and lift, textworld for the house sets)."""
    if task_set not in TASK_SETS:
        raise ValueError(f"unknown task set {task_set!r}; choose one of {', '.join(TASK_SETS)}")
    if env is None:
        return next(iter(TASK_SETS[task_set]))
    env = env_name(env)
    if env not in TASK_SETS[task_set]:
        offered = [name for name, spec in TASK_SETS.items() if env in spec]
        raise ValueError(f"task set {task_set!r} has no {env} tasks; {env} plays {', '.join(offered)}")
    return env


def open_task_set(
    env: str, task_set: str = "demo", world_seed: int | None = None, gold_cache: Any = None
) -> Environment:
    """The environment `env` configured to serve the games (or types) of `task_set`; for
    textworld, `world_seed` picks the world of the house set; for scienceworld, `gold_cache` (a
    JSON file) pins the gold paths the controls serve (the simulator's vary between runs)."""
    env = env_for_task_set(task_set, env)
    if env == "twx":
        params = TASK_SETS[task_set]["twx"]
        return make_env("twx", games=list(params), params=params)
    if env == "textworld":
        from rbdspy.envs.textworld_env import DEFAULT_WORLD  # optional: TextWorld's adapter (the envs extra)

        world = DEFAULT_WORLD if world_seed is None else world_seed
        return make_env("textworld", worlds=(world,), **TASK_SETS[task_set]["textworld"])
    return make_env("scienceworld", gold_cache=gold_cache)


def open_demo_env(name: str) -> Environment:
    """The environment the demo plays (one of `ENVS`), configured with its small task set
    (textworld: the house, the house stream's default world)."""
    if env_name(name) == "textworld":
        return open_task_set("textworld", "house")
    return open_task_set(name, "demo")


def task_set_types(env: Any, task_set: str = "demo") -> list[str]:
    """The task types of `task_set` on `env` (an environment object or its name). A textworld
    environment's types are its own (the world it was opened for, or "shuffled")."""
    name = env if isinstance(env, str) else getattr(env, "name", "")
    if name == "textworld":
        if not isinstance(env, str):
            return env.task_types()
        from rbdspy.envs.textworld_env import DEFAULT_WORLD, SHUFFLED  # optional: TextWorld's adapter (envs extra)

        return [SHUFFLED] if TASK_SETS[task_set]["textworld"]["shuffled"] else [str(DEFAULT_WORLD)]
    return list(TASK_SETS[task_set]["twx" if name == "twx" else "scienceworld"])


def demo_task_types(env: Any) -> list[str]:
    """The small task set's types for `env`: its games on TextWorld-Express, else the
    ScienceWorld types with short gold paths."""
    return task_set_types(env, "demo")


def house_demo_tasks(env: Any, n_tasks: int) -> list[str]:
    """`n_tasks` quests of the world that fetch the same thing: the first thing, in catalogue
    order, that `n_tasks` train or dev quests fetch (the one most fetched if none is), its
    quests shortest first ("Take the cashew." before "Put the cashew on the armchair."), so each
    quest after the first can be offered the way an earlier one went. Quests are generated only as
    far as the choice needs (a fresh machine compiles them on first use)."""
    from rbdspy.envs.textworld_house import SPLIT_CYCLE  # optional: TextWorld's adapter (the envs extra)

    seed = int(env.task_types()[0])
    catalogue = env.catalogue(seed)
    by_thing: dict[str, list] = {}
    chosen: list = []
    seen = dict.fromkeys(SPLIT_CYCLE, 0)
    for position in range(sum(env.pool.values())):
        split = SPLIT_CYCLE[position % len(SPLIT_CYCLE)]
        index, seen[split] = seen[split], seen[split] + 1
        quest = catalogue.quest(split, index)  # generated on first use, in catalogue order
        if split == "test" or not quest.goal.obj:  # an open/unlock quest fetches nothing
            continue
        chosen = by_thing.setdefault(quest.goal.obj, [])
        chosen.append(quest)
        if len(chosen) == n_tasks:
            break
    else:
        chosen = max(by_thing.values(), key=len, default=[])  # the first of the most fetched
    chosen = sorted(chosen, key=lambda q: len(q.walkthrough))
    return [f"textworld/{seed}/{q.split}/{q.index}" for q in chosen]


def demo_tasks(env: Any, n_tasks: int, split: str = "train") -> list[str]:
    """`n_tasks` task ids of the small task set: quests fetching one thing in a persistent world
    (`house_demo_tasks`), else one of each game/type in turn."""
    if getattr(env, "name", "") == "textworld":
        return house_demo_tasks(env, n_tasks)
    types = demo_task_types(env)
    per_type = -(-n_tasks // len(types))
    groups = [env.tasks(split, [t], limit=per_type) for t in types]
    return [ref.id for ref in interleave(groups, n_tasks)]
