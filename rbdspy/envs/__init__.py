"""rbdspy.envs: real text environments with automatic scoring, one adapter each.

    from rbdspy.envs import make_env, play
    env = make_env("scienceworld")            # or "twx"; needs `pip install 'rbdspy[envs]'` and Java
    tid = env.tasks("train", limit=1)[0].id   # "scienceworld/boil/train/0"
    trajectory = play(env, tid, env.gold_path(tid))

The agent that plays them is `rbdspy.agent.EnvAgent` (also `rbdspy.EnvAgent`); the labelled
trajectory datasets built from them are in `rbdspy.datasets`. This package imports neither.

The adapters import their simulator package only when constructed, so `import rbdspy.envs`
works without the `envs` extra.
"""

from __future__ import annotations

from typing import Any

from rbdspy.envs.base import SPLITS, Environment, Observation, StepResult, TaskRef, actions_of, play

ENV_NAMES = ("scienceworld", "twx", "textworld")
_ALIASES = {
    "scienceworld": "scienceworld",
    "sw": "scienceworld",
    "twx": "twx",
    "textworld-express": "twx",
    "textworld_express": "twx",
    "textworld": "textworld",
    "tw": "textworld",
}


def make_env(name: str, **options: Any) -> Environment:
    """An adapter by name: "scienceworld" (alias "sw"), "twx" (alias "textworld-express") or
    "textworld" (persistent TextWorld worlds, alias "tw"). Options go to the adapter (see
    ScienceWorld / TextWorldExpress / TextWorldHouses)."""
    key = _ALIASES.get(name.strip().lower())
    # Only the adapter asked for is imported (see __getattr__).
    if key == "scienceworld":
        from rbdspy.envs.scienceworld import ScienceWorld  # optional: ScienceWorld (the envs extra)

        return ScienceWorld(**options)
    if key == "twx":
        from rbdspy.envs.twx import TextWorldExpress  # optional: TextWorld-Express (the envs extra)

        return TextWorldExpress(**options)
    if key == "textworld":
        from rbdspy.envs.textworld_env import TextWorldHouses  # optional: TextWorld (the envs extra)

        return TextWorldHouses(**options)
    raise ValueError(f"unknown environment {name!r}; choose one of {', '.join(ENV_NAMES)}")


def __getattr__(name: str):
    # The adapter classes on demand: an adapter module loads when its class is asked for (~3 to 12 ms each),
    # and its simulator package only when an adapter is constructed.
    if name == "ScienceWorld":
        from rbdspy.envs.scienceworld import ScienceWorld  # optional: ScienceWorld (the envs extra)

        return ScienceWorld
    if name == "TextWorldExpress":
        from rbdspy.envs.twx import TextWorldExpress  # optional: TextWorld-Express (the envs extra)

        return TextWorldExpress
    if name == "TextWorldHouses":
        from rbdspy.envs.textworld_env import TextWorldHouses  # optional: TextWorld (the envs extra)

        return TextWorldHouses
    raise AttributeError(f"module 'rbdspy.envs' has no attribute {name!r}")


__all__ = [
    "ENV_NAMES",
    "SPLITS",
    "Environment",
    "Observation",
    "ScienceWorld",
    "StepResult",
    "TaskRef",
    "TextWorldExpress",
    "TextWorldHouses",
    "actions_of",
    "make_env",
    "play",
]
