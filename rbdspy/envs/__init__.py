"""rbdspy.envs: real text environments and the web (MiniWoB++) with automatic scoring, one adapter each.

    from rbdspy.envs import make_env, play
    env = make_env("scienceworld")            # or "twx", "textworld"; needs `pip install 'rbdspy[envs]'` (and Java)
    tid = env.tasks("train", limit=1)[0].id   # "scienceworld/boil/train/0"
    trajectory = play(env, tid, env.gold_path(tid))

The agent that plays them is `rbdspy.agent.EnvAgent` (also `rbdspy.EnvAgent`); the labelled
trajectory datasets built from them are in `rbdspy.datasets`. This package imports neither.

The adapters import their simulator package only when constructed, so `import rbdspy.envs`
works without the `envs` extra. Every environment is registered once, in `rbdspy.envs.registry`;
what an adapter can do beyond the protocol is a capability (`rbdspy.envs.capabilities`), and
`rbdspy.envs.conformance` checks an adapter against both (docs/guides/add-an-environment.md).
"""

from __future__ import annotations

from typing import Any

from rbdspy.envs.base import SPLITS, Environment, Observation, StepResult, TaskRef, actions_of, play
from rbdspy.envs.registry import ENTRIES, ENV_NAMES, entry, entry_for_class


def make_env(name: str, **options: Any) -> Environment:
    """An adapter by name (`rbdspy.envs.registry`): "textworld" (persistent TextWorld worlds, alias
    "tw"), "twx" (alias "textworld-express"), "scienceworld" (alias "sw") or "miniwob" (MiniWoB++
    web pages, alias "web"). Options go to the adapter (see TextWorldHouses / TextWorldExpress /
    ScienceWorld / MiniWoB). An unknown name is a ValueError naming the known ones."""
    return entry(name).factory()(**options)  # only the adapter asked for is imported


def __getattr__(name: str):
    # The adapter classes on demand: an adapter module loads when its class is asked for (~3 to 12 ms each),
    # and its simulator package only when an adapter is constructed.
    found = entry_for_class(name)
    if found is None:
        raise AttributeError(f"module 'rbdspy.envs' has no attribute {name!r}")
    return found.factory()


# The adapter classes are named by the registry (`EnvEntry.adapter`), served by __getattr__ above.
__all__ = [
    "ENV_NAMES",
    "SPLITS",
    "Environment",
    "Observation",
    "StepResult",
    "TaskRef",
    "actions_of",
    "make_env",
    "play",
    *(e.class_name for e in ENTRIES),
]
