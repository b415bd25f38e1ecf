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

An environment whose tasks are quests a persistent world must hold (TextWorld houses: `HostsTasks`)
is asked which of its pool it can serve before anything is drawn; a stream longer than that is
refused up front (`StreamTooLongError`), naming the world, what it holds and what to ask instead,
rather than failing task after task.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass
from typing import Any

from rbdspy.envs.base import interleave
from rbdspy.envs.capabilities import HostsTasks
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


class StreamTooLongError(ValueError):
    """The environment cannot serve as many tasks as the stream asks (a world out of quests)."""


def _pool(env: Any, split: str, task_type: str) -> list[str]:
    """The task ids a phase draws from: the first `SAMPLE_POOL` of the type's `split`, less those a
    persistent world does not hold (`env.hosted`, where the environment `HostsTasks`)."""
    pool = [ref.id for ref in env.tasks(split, [task_type], limit=SAMPLE_POOL)]
    return env.hosted(pool) if isinstance(env, HostsTasks) else pool


def _sample(env: Any, pool: list[str], split: str, task_type: str, n: int, rng: random.Random) -> list[str]:
    if not pool:
        raise ValueError(f"{getattr(env, 'name', 'env')} has no {split} tasks of type {task_type!r}")
    return rng.sample(pool, min(n, len(pool)))


def _interleaved(
    env: Any, pools: dict, split: str, types: list[str], n: int, rng: random.Random
) -> list[tuple[str, str]]:
    per_type = -(-n // len(types))
    groups = [[(t, tid) for tid in _sample(env, pools[split, t], split, t, per_type, rng)] for t in types]
    return interleave(groups, n)


def _fits(pools: dict, types: list[str], n_tasks: int, build_fraction: float, measure_split: str) -> bool:
    """Whether every type's pools hold its share of `n_tasks` (build on train, the rest measured)."""
    n_build = round(n_tasks * build_fraction)
    wanted = {"train": n_build} if n_build else {}
    wanted[measure_split] = n_tasks - n_build
    return all(-(-n // len(types)) <= len(pools[split, t]) for split, n in wanted.items() if n for t in types)


def _check_hosted(env: Any, pools: dict, types: list[str], n_tasks: int, build_fraction: float, measure_split: str):
    """Refuses a stream that asks a persistent world for more quests than it holds, saying what
    would fit (environments that do not `HostsTasks` draw what their pools offer, as before)."""
    if not isinstance(env, HostsTasks) or _fits(pools, types, n_tasks, build_fraction, measure_split):
        return
    fit = next((n for n in range(n_tasks - 1, 0, -1) if _fits(pools, types, n, build_fraction, measure_split)), 0)
    short = min(types, key=lambda t: len(pools.get(("train", t), ())) + len(pools[measure_split, t]))
    n_build = round(n_tasks * build_fraction)
    hint = env.capacity_hint(short)
    instead = [f"at most {fit} tasks (--tasks {fit})"] if fit else []
    instead += [hint] if hint else []
    note = env.capacity_note(short)
    raise StreamTooLongError(
        f"{note}: too few for {n_tasks} tasks with build fraction {build_fraction} "
        f"({n_build} built on train, {n_tasks - n_build} measured on {measure_split}); "
        f"ask for {' or '.join(instead) or 'fewer tasks'}"
    )


def build_stream(
    env: Any,
    n_tasks: int,
    seed: int = 0,
    build_fraction: float = 0.5,
    measure_split: str = "dev",
    task_types: list[str] | None = None,
    exclude: set[str] | frozenset[str] = frozenset(),
) -> list[BenchTask]:
    """`n_tasks` tasks: the first round(n * build_fraction) from train (build), the rest from
    `measure_split` (measure), each phase interleaved across `task_types`; none of `exclude`
    (tasks earlier runs played: a fresh stream)."""
    if n_tasks < 1:
        raise ValueError(f"--tasks must be at least 1; got {n_tasks}")
    if not 0.0 <= build_fraction < 1.0:
        raise ValueError(f"build_fraction must be in [0, 1) so that some tasks are measured; got {build_fraction}")
    if measure_split not in ("dev", "test"):
        raise ValueError(f"measure_split must be dev or test (train is for building memory); got {measure_split!r}")
    types = list(task_types or demo_task_types(env))  # the demo's small task set
    n_build = round(n_tasks * build_fraction)
    splits = ["train", measure_split] if n_build else [measure_split]
    pools = {(split, t): [tid for tid in _pool(env, split, t) if tid not in exclude] for split in splits for t in types}
    _check_hosted(env, pools, types, n_tasks, build_fraction, measure_split)
    rng = random.Random(seed)
    rows = [("build", t, tid) for t, tid in _interleaved(env, pools, "train", types, n_build, rng)] if n_build else []
    rows += [("measure", t, tid) for t, tid in _interleaved(env, pools, measure_split, types, n_tasks - n_build, rng)]
    return [BenchTask(index=i, task_id=tid, phase=phase, task_type=t) for i, (phase, t, tid) in enumerate(rows)]


def stream_from_dicts(rows: list[dict]) -> list[BenchTask]:
    return [BenchTask(**row) for row in rows]
