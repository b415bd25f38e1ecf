"""`BenchOptions`: the settings of one benchmark run, as `run_bench` takes them.

    options = BenchOptions(task_set="lift", arms="no-memory,reasoningbank", seed=3)
    run_bench(lm, embedder, "bench-runs/x", options)            # or as keywords:
    run_bench(lm, embedder, "bench-runs/x", task_set="lift", arms="no-memory,reasoningbank", seed=3)

A field left at None is resolved by `run_bench`, once (`rbdspy.bench.settings.resolve`: the
stream's size from `smoke`, the environment from `task_set`); the resolved object is what the run's
jobs and players read, and what describes the run (not `SESSION_FIELDS`) is written to its
config.json.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rbdspy.options import Options


@dataclass(frozen=True)
class BenchOptions(Options):
    """What a benchmark run plays, where, and what it reports (`rbdspy bench`'s options). Frozen:
    `options.replace(seed=1)` is a copy with a field changed, `options.as_kwargs()` the fields as
    `run_bench`'s keyword arguments."""

    env: str | None = None
    """The environment: twx, scienceworld or textworld; default the one `task_set` is played in
    (twx for demo and lift, textworld for the house sets)."""
    n_tasks: int | None = None
    """Tasks in the stream, `build_fraction` of them built on train, the rest measured on dev
    (default `DEFAULT_TASKS`, `SMOKE_TASKS` with `smoke`)."""
    arms: str | list[str] | None = None
    """Arm names and/or sets, a list or a comma-separated string (`rbdspy.bench.parse_arms`;
    default the "default" set)."""
    seed: int = 0
    """Which variations are drawn, and the bootstrap's seed."""
    max_steps: int | None = None
    """Step limit per task (default `DEFAULT_MAX_STEPS`, `SMOKE_MAX_STEPS` with `smoke`)."""
    compiled: str | Path | None = None
    """Compiled judge/extractor prompts for every bank: the output directory of `rbdspy compile`
    or a bank's saved .json (None: the hand-written prompts)."""
    build_fraction: float = 0.5
    """Share of the stream built on train variations; the rest is measured on `measure_split`."""
    measure_split: str = "dev"
    """The split the measured tasks are drawn from."""
    resume: bool = False
    """Continue the run in `out_dir`, skipping finished tasks (its settings must match)."""
    smoke: bool = False
    """CI size: the stream shrinks to `SMOKE_TASKS` tasks of `SMOKE_MAX_STEPS` steps, unless
    `n_tasks` / `max_steps` are given."""
    lm_name: str = ""
    """The LM's name, as config.json and the reports record it."""
    embedder_name: str = ""
    """The embedder's name, as config.json and the reports record it."""
    mlflow: bool = True
    """Log the run to MLflow (a parent run and a child per arm)."""
    experiment: str = "rbdspy-bench"
    """The MLflow experiment."""
    n_resamples: int | None = None
    """Resamples of the paired bootstrap (default `rbdspy.bench.stats.DEFAULT_RESAMPLES`)."""
    task_set: str = "demo"
    """The games and sizes the stream draws from (`rbdspy.envs.task_sets`): demo, lift, house,
    house-shuffled, house-starts or house-starts-shuffled."""
    seed_from: list[str | Path] | None = None
    """Train JSONL files the seeded arms learn from (train records only; default
    `datasets/<env>-train.jsonl`)."""
    seed_per_type: int = 2
    """Seed records per task type of the stream (seeded arms)."""
    executor: str = "local"
    """Where the arms play (`rbdspy.bench.executors`): "local", one after another in this
    process, or "ray", one Ray task per arm, each worker opening `env`'s `task_set` itself. Either
    way the records are the same."""
    ray_address: str | None = None
    """With the ray executor: the cluster to join (default a local one of `workers` CPUs)."""
    workers: int | None = None
    """With the ray executor: the local cluster's CPUs, and the most arms played at once."""
    bank_url: str | None = None
    """Keep every arm's bank on this PostgreSQL server (namespace `bench/<run>/<arm>`) instead of
    under the run directory: what arms on several machines share."""
    world_seed: int | None = None
    """The world a house stream is played in (env textworld only; default the environment's). A
    world holding fewer quests than the stream asks is refused before the first task
    (`rbdspy.bench.tasks.StreamTooLongError`)."""
    agent: str = "auto"
    """The EnvAgent variant every arm plays with (`rbdspy.bench.agent_variants.AGENT_VARIANTS`);
    "auto" is EnvAgent's default (`rbdspy.agent.policies.DEFAULT_POLICIES`), chosen per task by
    whether its world persists."""
    pause_arms: str | list[str] | None = None
    """With `resume`: arms of the run not played this session (a comma list or a list). They keep
    their records, each arm is reported over the tasks it played, and a later resume without them
    paused plays them on from where they stopped. The baseline (no-memory) cannot be paused."""
    calibrate_on_build: bool = False
    """Arms labelled by the probability judge learn from the environment's labels on the build
    tasks, where the judge scores each trajectory once; at the first measured task the judge's
    band is calibrated on those scores and labels the rest (`rbdspy.bench.build_calibration`)."""
    fresh_from: list[str | Path] | None = None
    """Earlier runs' directories (or their config.json files) whose tasks this stream never draws:
    a measured task someone looked at while developing is not measured again (the tasks left out
    are written to config.json's `fresh_from`)."""
