"""A run's settings, resolved once: the `BenchOptions` every part of a run reads, and how
config.json records them.

Why one place: a run's settings used to be restated by each class that carried them (the
runner's config, the Ray job, the player), so a new option had to be threaded through four
signatures and each could drift. Now `resolve` turns the `BenchOptions` a caller gave into the
`BenchOptions` the run plays with (every field `run_bench` fills in filled in, checked before
any work), and that one object travels: the runner, each `ArmJob` (a Ray worker included) and
each `ArmPlayer` read their settings from it.

config.json's "config" is `run_record(settings)`: the fields that describe the run (not the ones
that only say how this session runs it, `SESSION_FIELDS`), two of them under their older names
(`RECORDED_AS`), the PostgreSQL password left out. Its keys and values are what they were when a
dataclass of its own restated them, so a committed run resumes (`resume_mismatches`) and reports
(`saved_record`) as before. `open_environment` opens what the settings name, for the runner and
for each Ray worker alike.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

from rbdspy.agent.compiled_agent import shipped_for
from rbdspy.bench.agent_variants import SHIPPED, USER_AGENTS, agent_options
from rbdspy.bench.arms import parse_arms
from rbdspy.bench.options import BenchOptions
from rbdspy.bench.records import GOLD_FILE
from rbdspy.envs.registry import entry, with_world_seeds
from rbdspy.envs.task_sets import env_for_task_set, open_task_set
from rbdspy.memory.postgres import redacted

# Default size, for the embedded 1.5B local LM on 2 cores, where an agent step takes seconds: 12
# tasks x up to 8 steps x 3 arms fits in about an hour, judge and extractor calls included
# (docs/guides/bench.md#default-size-and-its-duration).
DEFAULT_TASKS = 12
DEFAULT_MAX_STEPS = 8
SMOKE_TASKS = 6  # two of each demo game: one built on train, one measured on dev
SMOKE_MAX_STEPS = 2

# How this session runs the run, not what the run is: not in config.json, free to differ on resume.
SESSION_FIELDS = ("resume", "mlflow", "experiment", "n_resamples", "executor", "ray_address", "workers", "pause_arms")
# Fields that only shape how a new run's stream is drawn: the stream itself is in config.json (with
# what they left out), so they are not in its record and a resume reads the stream as it was.
STREAM_FIELDS = ("fresh_from",)
# Fields config.json keeps under another name (the names it has always had).
RECORDED_AS = {"lm_name": "lm", "embedder_name": "embedder"}
COMPILED_ARM = "compiled-agent"
UNNAMED_MODELS = ("lm", "embedder")  # resume keys a run may have left empty
# Settings that must match for --resume to continue a run rather than mix two (config.json's names).
RESUME_KEYS = (
    "env",
    "lm",
    "embedder",
    "n_tasks",
    "seed",
    "max_steps",
    "compiled",
    "build_fraction",
    "measure_split",
    "task_set",
    "bank_url",
    "world_seed",
    "agent",
    "calibrate_on_build",
)


def compiled_setting(compiled: Any) -> str | None:
    """`compiled` as a run records it (a path as a string, or None); a path that does not exist,
    or anything else, is an error before any work."""
    if compiled is None:
        return None
    if isinstance(compiled, bool) or not isinstance(compiled, (str, Path)):
        raise TypeError(
            "compiled is the output directory of `rbdspy compile` or a bank's saved .json, or None for the "
            f"hand-written prompts (the package ships none); got {compiled!r}"
        )
    if not Path(compiled).exists():
        raise FileNotFoundError(f"no compiled prompts at {compiled}")
    return str(compiled)


def resolve(options: BenchOptions) -> BenchOptions:
    """The settings a run plays with: `options` with the environment, the stream's size, the arms,
    the compiled prompts and the seed files resolved (a list of arm names, strings for paths).
    A setting that cannot be played (an unknown agent variant or arm, a world seed outside
    textworld, a step limit under 1, compiled prompts that are not there) is an error here, before
    any work. Resolving resolved settings changes nothing."""
    env = env_for_task_set(options.task_set, options.env)
    if options.world_seed is not None and env not in with_world_seeds():
        seeded = " or ".join(f"--env {name}" for name in with_world_seeds())
        raise ValueError(f"--world-seed picks a persistent world: it applies to {seeded}, not {env}")
    agent_options(options.agent)  # an unknown variant fails before any work
    smoke = options.smoke
    max_steps = options.max_steps
    max_steps = max_steps if max_steps is not None else (SMOKE_MAX_STEPS if smoke else DEFAULT_MAX_STEPS)
    if max_steps < 1:
        raise ValueError(f"--max-steps must be at least 1; got {max_steps}")
    arms = parse_arms(options.arms)
    _check_compiled_agent(options.agent, _played(arms, options.pause_arms), env)
    return options.replace(
        env=env,
        n_tasks=options.n_tasks if options.n_tasks is not None else (SMOKE_TASKS if smoke else DEFAULT_TASKS),
        arms=arms,
        max_steps=max_steps,
        compiled=compiled_setting(options.compiled),
        seed_from=[str(p) for p in (options.seed_from or [])],
        fresh_from=[str(p) for p in (options.fresh_from or [])],
    )


def paused_names(spec: str | list[str] | None) -> list[str]:
    """The arm names `--pause-arms` gives (comma-separated or a list), unchecked."""
    return [a.strip() for a in (spec.split(",") if isinstance(spec, str) else spec or []) if a.strip()]


def _played(arms: list[str], pause_arms: str | list[str] | None) -> list[str]:
    """The `arms` a session plays: those `pause_arms` names are not built, so what they would need
    is not asked for (the runner checks the names themselves)."""
    paused = set(paused_names(pause_arms))
    return [a for a in arms if a not in paused]


def _check_compiled_agent(agent: str, arms: list[str], env: str) -> None:
    """The compiled-agent arm needs a user agent, and it and `react-compiled` a compiled agent
    rbdspy ships for `env`: an error before any arm is played."""
    if COMPILED_ARM in arms and agent not in USER_AGENTS:
        raise ValueError(f"the {COMPILED_ARM} arm plays a user agent: run with --agent react (or a variant)")
    if COMPILED_ARM in arms or agent_options(agent).get("compiled") == SHIPPED:
        shipped_for(entry(env).name)  # a ValueError naming what is shipped, where none is for env


def run_record(settings: BenchOptions) -> dict[str, Any]:
    """config.json's "config" (and results.json's): the resolved `settings` that describe the run,
    under config.json's names, the bank server's password left out ("" for no server)."""
    record = {
        RECORDED_AS.get(f.name, f.name): getattr(settings, f.name)
        for f in fields(settings)
        if f.name not in SESSION_FIELDS and f.name not in STREAM_FIELDS
    }
    record["arms"] = list(record["arms"])
    record["seed_from"] = list(record["seed_from"])
    record["bank_url"] = redacted(settings.bank_url) if settings.bank_url else ""
    return record


def record_defaults() -> dict[str, Any]:
    """The record of a run left at every default: what a run written before a setting existed had."""
    return run_record(resolve(BenchOptions()))


def saved_record(saved: Mapping[str, Any]) -> dict[str, Any]:
    """A config.json's "config" as this version records one: a key it lacks at its default, a key
    this version no longer records left out."""
    defaults = record_defaults()
    return {key: saved.get(key, default) for key, default in defaults.items()}


def _resume_value(key: str, value: Any) -> Any:
    """A setting as resuming compares it: `compiled` True (the package's shipped prompts, in a run
    written before compiled prompts were given by path) is None, as the package ships none."""
    return None if key == "compiled" and isinstance(value, bool) else value


def resume_mismatches(saved: Mapping[str, Any], settings: BenchOptions) -> list[str]:
    """What stops `settings` resuming the run whose config.json "config" is `saved`, one line per
    setting of `RESUME_KEYS` that differs ("key: run has X, asked Y"); empty when it may resume."""
    run, asked = saved_record(saved), run_record(settings)
    return [
        f"{key}: run has {saved.get(key)!r}, asked {asked[key]!r}"
        for key in RESUME_KEYS
        if _resume_value(key, run[key]) != _resume_value(key, asked[key])
        # A run played through the Python API records no model's name: it cannot say which it was.
        and not (key in UNNAMED_MODELS and not run[key])
    ]


def open_environment(settings: BenchOptions, out_dir: str | Path):
    """The environment resolved `settings` play in, opened (the caller closes it): `env`'s
    `task_set`, in the world `world_seed` names; gold paths that vary between simulator starts
    (ScienceWorld's, `EnvEntry.pins_gold`) pinned in the run directory. What the runner opens, and
    what each Ray worker opens for itself."""
    return open_task_set(settings.env, settings.task_set, settings.world_seed, gold_cache=Path(out_dir) / GOLD_FILE)


def tasks_of_runs(runs: list[str]) -> set[str]:
    """Every task id the streams of `runs` (run directories or their config.json) hold; a run
    that is not there is an error naming it."""
    found: set[str] = set()
    for run in runs:
        path = Path(run)
        path = path / "config.json" if path.is_dir() else path
        if not path.is_file():
            raise FileNotFoundError(f"--fresh-from {run}: no run there (no config.json)")
        found |= {row["task_id"] for row in json.loads(path.read_text(encoding="utf-8"))["stream"]}
    return found
