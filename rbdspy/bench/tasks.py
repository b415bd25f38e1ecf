"""The paired task stream every arm plays: the same tasks, in the same order.

Two phases, both interleaved across task types (twc, coin, cookingworld, twc, ...):

- build: tasks from the environment's *train* variations. The arm plays them and its bank
  learns from them; their success counts in "all" but not in "measured".
- measure: tasks from the *dev* (or test) variations, never seen in training. The arm keeps
  learning online while it plays them (the paper's streaming setting), and the headline
  success rate is computed on these.

Which variations are drawn is decided by `seed` (a random sample of each type's variations),
so a run is reproducible and a different seed gives a different, equally fair stream. Arms never
see different tasks: the stream is built once, written to the run's config.json and reused on
resume.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass
from typing import Any

from rbdspy.envs.base import interleave
from rbdspy.envs.task_sets import demo_task_types

PHASES = ("build", "measure")
# How far into each type's variation list the seed samples: the first variations of a split
# are as good as any, and listing a few hundred keeps ScienceWorld's start-up cheap.
SAMPLE_POOL = 200


@dataclass(frozen=True)
class BenchTask:
    """One task of the stream: its position, its environment id and its phase."""

    index: int
    task_id: str
    phase: str
    task_type: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _sample(env: Any, split: str, task_type: str, n: int, rng: random.Random) -> list[str]:
    pool = [ref.id for ref in env.tasks(split, [task_type], limit=SAMPLE_POOL)]
    if not pool:
        raise ValueError(f"{getattr(env, 'name', 'env')} has no {split} tasks of type {task_type!r}")
    return rng.sample(pool, min(n, len(pool)))


def _interleaved(env: Any, split: str, types: list[str], n: int, rng: random.Random) -> list[tuple[str, str]]:
    per_type = -(-n // len(types))
    groups = [[(t, tid) for tid in _sample(env, split, t, per_type, rng)] for t in types]
    return interleave(groups, n)


def build_stream(
    env: Any,
    n_tasks: int,
    seed: int = 0,
    build_fraction: float = 0.5,
    measure_split: str = "dev",
    task_types: list[str] | None = None,
) -> list[BenchTask]:
    """`n_tasks` tasks: the first round(n * build_fraction) from train (build), the rest from
    `measure_split` (measure), each phase interleaved across `task_types`."""
    if n_tasks < 1:
        raise ValueError(f"--tasks must be at least 1; got {n_tasks}")
    if not 0.0 <= build_fraction < 1.0:
        raise ValueError(f"build_fraction must be in [0, 1) so that some tasks are measured; got {build_fraction}")
    if measure_split not in ("dev", "test"):
        raise ValueError(f"measure_split must be dev or test (train is for building memory); got {measure_split!r}")
    types = list(task_types or demo_task_types(env))  # the demo's small task set
    rng = random.Random(seed)
    n_build = round(n_tasks * build_fraction)
    rows = [("build", t, tid) for t, tid in _interleaved(env, "train", types, n_build, rng)] if n_build else []
    rows += [("measure", t, tid) for t, tid in _interleaved(env, measure_split, types, n_tasks - n_build, rng)]
    return [BenchTask(index=i, task_id=tid, phase=phase, task_type=t) for i, (phase, t, tid) in enumerate(rows)]


def stream_from_dicts(rows: list[dict]) -> list[BenchTask]:
    return [BenchTask(**row) for row in rows]
