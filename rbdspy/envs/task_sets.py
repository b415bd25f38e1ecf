"""The small task sets that `rbdspy demo` and `rbdspy bench` play, and the environment that
serves them, read from the registry (`rbdspy.envs.registry`: which sets each environment serves,
with which options and task types).

TextWorld-Express games are made small (one to three rooms, no distractors) and ScienceWorld is
restricted to task types with short gold paths, so that a 1.5B local model can finish some of
them within a demo's step limit. Task types are interleaved (twc, coin, cookingworld, twc, ...)
so that every task after the first round has a lesson from its own kind to retrieve.
"""

from __future__ import annotations

from typing import Any

from rbdspy.envs import make_env
from rbdspy.envs.base import Environment, interleave
from rbdspy.envs.registry import (
    ENTRIES,
    ENV_NAMES,
    LIFT_TWX_PARAMS,
    SW_DEMO_TYPES,
    SW_HOUSE_TYPES,
    TWX_DEMO_PARAMS,
    TaskSet,
    entry,
    load_function,
    registered,
    task_set_names,
    with_world_seeds,
)

# The environments `rbdspy demo --env` and `rbdspy bench --env` take, one vocabulary named as the
# adapters are (`rbdspy.envs.ENV_NAMES`), the demo's default first; each described by its registry
# entry (`rbdspy.envs.registry.ENTRIES`).
ENVS = ENV_NAMES
# Spellings `--env` took before it was one vocabulary: refused with the name to use instead.
RENAMED_ENVS = {old: e.name for e in ENTRIES for old in e.renamed}
# Named task sets for `rbdspy bench --task-set`, each with the environments that serve it (the
# first is the one it is played in when --env is left out) and how each serves it.
TASK_SETS: dict[str, dict[str, TaskSet]] = {
    name: {e.name: e.task_sets[name] for e in ENTRIES if name in e.task_sets} for name in task_set_names()
}

__all__ = [
    "ENVS",
    "LIFT_TWX_PARAMS",
    "RENAMED_ENVS",
    "SW_DEMO_TYPES",
    "SW_HOUSE_TYPES",
    "TASK_SETS",
    "TWX_DEMO_PARAMS",
    "demo_task_types",
    "demo_tasks",
    "env_name",
    "open_demo_env",
    "open_task_set",
]


def env_name(name: str) -> str:
    """The environment `name` (or an alias) names; a ValueError in one line otherwise, naming the
    environments, or the spelling to use for an old one ("house" is a world of textworld)."""
    return entry(name).name


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
    """The environment `env` configured to serve the games (or types) of `task_set`: opened with the
    set's options (`TaskSet.options`); `world_seed` picks the world where the environment's worlds
    are picked by seed (textworld; its default world otherwise); `gold_cache` (a JSON file) pins the
    gold paths the controls serve where they vary between runs (scienceworld)."""
    spec = entry(env_for_task_set(task_set, env))
    options = dict(spec.task_set(task_set).options)
    if spec.world_seeds is not None:
        options[spec.world_seeds.option] = (spec.world_seeds.default if world_seed is None else world_seed,)
    elif world_seed is not None:
        seeded = " or ".join(with_world_seeds()) or "no environment"
        raise ValueError(f"a world seed picks a persistent world: it applies to {seeded}, not {spec.name}")
    if spec.pins_gold:
        options["gold_cache"] = gold_cache
    return make_env(spec.name, **options)


def open_demo_env(name: str) -> Environment:
    """The environment the demo plays (one of `ENVS`), configured with its demo task set
    (`EnvEntry.demo_set`; textworld: the house, the house stream's default world)."""
    spec = entry(name)
    return open_task_set(spec.name, spec.demo_set)


def task_set_types(env: Any, task_set: str = "demo") -> list[str]:
    """The task types of `task_set` on `env` (an environment object or its name). Where a world
    seed picks the world (textworld), an open environment's types are its own (the world it was
    opened for, or "shuffled"); an environment no registry entry names plays its own types."""
    if isinstance(env, str):
        return list(entry(env).task_set(task_set).task_types)
    spec = registered(getattr(env, "name", ""))
    if spec is None or spec.world_seeds is not None:
        return list(env.task_types())
    return list(spec.task_set(task_set).task_types)


def demo_task_types(env: Any) -> list[str]:
    """The demo's task types for `env` (its entry's `demo_set`): its games on TextWorld-Express,
    the ScienceWorld types with short gold paths, a house's world."""
    name = env if isinstance(env, str) else getattr(env, "name", "")
    spec = registered(name)
    return task_set_types(env, spec.demo_set if spec is not None else "demo")


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
    """`n_tasks` task ids of the small task set: as the environment's entry picks them
    (`EnvEntry.demo_pick`; textworld: quests fetching one thing, `house_demo_tasks`), else one of
    each game/type in turn."""
    spec = registered(getattr(env, "name", ""))
    if spec is not None and spec.demo_pick is not None:
        return load_function(spec.demo_pick)(env, n_tasks)
    types = demo_task_types(env)
    per_type = -(-n_tasks // len(types))
    groups = [env.tasks(split, [t], limit=per_type) for t in types]
    return [ref.id for ref in interleave(groups, n_tasks)]
