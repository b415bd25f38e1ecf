"""The small task sets that `rbdspy demo` and `rbdspy bench` play, and the environment that
serves them.

TextWorld-Express games are made small (one to three rooms, no distractors) and ScienceWorld is
restricted to task types with short gold paths, so that a 1.5B local model can finish some of
them within a demo's step limit. Task types are interleaved (twc, coin, cookingworld, twc, ...)
so that every task after the first round has a lesson from its own kind to retrieve.
"""

from __future__ import annotations

from typing import Any

from rbdspy.envs.base import Environment, interleave

# Small games: a handful of gold steps each (twc 3, coin 1-4, cookingworld ~10).
TWX_DEMO_PARAMS = {
    "twc": "numLocations=1,numItemsToPutAway=1,includeDoors=0",
    "coin": "numLocations=3,numDistractorItems=0,includeDoors=0",
    "cookingworld": "numLocations=1,numIngredients=1,numDistractorItems=0,includeDoors=0",
}
# ScienceWorld task types whose gold paths are short enough for a demo's step budget.
SW_DEMO_TYPES = ("find-living-thing", "find-plant", "find-animal")
DEMO_ENVS = ("twx", "scienceworld")

__all__ = ["DEMO_ENVS", "SW_DEMO_TYPES", "TWX_DEMO_PARAMS", "demo_task_types", "demo_tasks", "open_demo_env"]


def open_demo_env(name: str) -> Environment:
    """The environment the demo and the benchmark play, configured with its small task set."""
    from rbdspy.envs import make_env

    if name == "twx":
        return make_env("twx", games=list(TWX_DEMO_PARAMS), params=TWX_DEMO_PARAMS)
    if name == "scienceworld":
        return make_env("scienceworld")
    raise ValueError(f"unknown demo environment {name!r}; choose one of {', '.join(DEMO_ENVS)}")


def demo_task_types(env: Any) -> list[str]:
    """The small task set's types for `env`: its games on TextWorld-Express, else the
    ScienceWorld types with short gold paths."""
    return list(TWX_DEMO_PARAMS) if getattr(env, "name", "") == "twx" else list(SW_DEMO_TYPES)


def demo_tasks(env: Any, n_tasks: int, split: str = "train") -> list[str]:
    """`n_tasks` task ids of the small task set, one of each game/type in turn."""
    types = demo_task_types(env)
    per_type = -(-n_tasks // len(types))
    groups = [env.tasks(split, [t], limit=per_type) for t in types]
    return [ref.id for ref in interleave(groups, n_tasks)]
