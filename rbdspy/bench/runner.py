"""Runs the arms over the paired stream, each from an empty bank: task by task in this process
(every arm on task i before any arm on task i+1), or each arm as a Ray task (executors.py), with
the same records either way.

Layout of an output directory:

    config.json            the settings and the stream (reused verbatim by --resume)
    arms/<arm>.jsonl       one record per finished task (appended as it finishes)
    banks/<arm>/           the arm's memory store (SQLite + FAISS), unless the run keeps its banks
                           on a PostgreSQL server (`bank_url`: one namespace per run and arm)
    results.json, results.md, learning_curve.png, success_bars.png   (see report.py)

Resuming: records already on disk are skipped and an interrupted task's bank writes are rolled
back (player.py). config.json's `sessions` lists, for the first session and each resume, the
machine, engine and code revision that played (provenance.py): greedy decoding on a CPU can flip
between machines, so a run says where its records came from.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import dspy
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from rbdspy.bench.agent_variants import agent_options
from rbdspy.bench.arms import ARMS, BASELINE, parse_arms
from rbdspy.bench.executors import ArmJob, make_executor
from rbdspy.bench.options import BenchOptions
from rbdspy.bench.player import SPEND_FIELDS, arm_namespace, run_arm, task_record  # noqa: F401  (public here too)
from rbdspy.bench.provenance import session_info
from rbdspy.bench.records import GOLD_FILE, arm_path, read_records
from rbdspy.bench.report import write_reports
from rbdspy.bench.stats import DEFAULT_RESAMPLES
from rbdspy.bench.tasks import BenchTask, build_stream, stream_from_dicts
from rbdspy.datasets.dataset import load_records, seeding_sample
from rbdspy.envs.task_sets import env_for_task_set, open_task_set, task_set_types
from rbdspy.memory.postgres import redacted

# Default size, for the embedded 1.5B local LM on 2 cores, where an agent step takes seconds: 12
# tasks x up to 8 steps x 3 arms fits in about an hour, judge and extractor calls included
# (docs/guides/bench.md#default-size-and-its-duration).
DEFAULT_TASKS = 12
DEFAULT_MAX_STEPS = 8
SMOKE_TASKS = 6  # two of each demo game: one built on train, one measured on dev
SMOKE_MAX_STEPS = 2
# Settings that must match for --resume to continue a run rather than mix two.
RESUME_KEYS = (
    "env",
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


@dataclass
class BenchConfig:
    env: str = "twx"
    n_tasks: int = DEFAULT_TASKS
    arms: list[str] = field(default_factory=lambda: parse_arms("default"))
    seed: int = 0
    max_steps: int = DEFAULT_MAX_STEPS
    # Compiled prompts every bank loaded (a directory or a bank's .json), None: the hand-written
    # ones. A run written before they were given by path holds True (the package's shipped
    # prompts) or False.
    compiled: str | bool | None = None
    build_fraction: float = 0.5
    measure_split: str = "dev"
    smoke: bool = False
    lm: str = ""
    embedder: str = ""
    task_set: str = "demo"
    seed_from: list[str] = field(default_factory=list)
    seed_per_type: int = 2
    bank_url: str = ""  # the banks' PostgreSQL server, password left out ("": directories under banks/)
    world_seed: int | None = None  # the world of a house stream (None: the environment's default)
    agent: str = "auto"  # the EnvAgent variant every arm plays with (agent_variants.AGENT_VARIANTS)
    calibrate_on_build: bool = False  # judge-labelled arms: the band placed on the build tasks


def _resume_value(key: str, value: Any) -> Any:
    """A setting as resuming compares it: `compiled` True (the package's shipped prompts, in a run
    written before compiled prompts were given by path) is None, as the package ships none."""
    return None if key == "compiled" and isinstance(value, bool) else value


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


def _paused(spec: str | list[str] | None, config: BenchConfig, resume: bool) -> list[str]:
    """The arms `spec` names to pause this session, checked against the run's arms."""
    names = [a.strip() for a in (spec.split(",") if isinstance(spec, str) else spec or []) if a.strip()]
    if not names:
        return []
    if not resume:
        raise ValueError("--pause-arms applies to a resumed run (--resume): a new run plays every arm it names")
    unknown = [a for a in names if a not in config.arms]
    if unknown:
        raise ValueError(f"--pause-arms: {', '.join(unknown)} not among the run's arms ({', '.join(config.arms)})")
    if BASELINE in names:
        raise ValueError(f"--pause-arms: {BASELINE} is what every arm is compared with on each task; it plays on")
    return names


def _prepare_dir(
    out_dir: Path, config: BenchConfig, resume: bool, environment, pause: str | list[str] | None = None
) -> tuple[list[BenchTask], list[str]]:
    """The stream to play and the arms paused this session (`pause`, checked): the stored stream
    on resume (after checking the settings match), a new one otherwise. Refuses to mix a new run
    into a directory that holds one."""
    config_path = out_dir / "config.json"
    if config_path.is_file():
        saved = json.loads(config_path.read_text(encoding="utf-8"))
        if not resume:
            raise FileExistsError(
                f"{out_dir} already holds a benchmark run: pass --resume to continue it, or another --out"
            )
        defaults = BenchConfig()  # a run written before a setting existed had its default
        mismatched = [
            k
            for k in RESUME_KEYS
            if _resume_value(k, saved["config"].get(k, getattr(defaults, k))) != _resume_value(k, getattr(config, k))
        ]
        if mismatched:
            detail = ", ".join(
                f"{k}: run has {saved['config'].get(k)!r}, asked {getattr(config, k)!r}" for k in mismatched
            )
            raise ValueError(f"cannot resume {out_dir} with different settings ({detail})")
        # Resuming may add arms; the results cover every arm the run has played.
        config.arms = list(dict.fromkeys(saved["config"]["arms"] + config.arms))
        paused = _paused(pause, config, resume)
        saved["config"]["arms"] = config.arms
        saved["resumed_at"] = datetime.now(UTC).isoformat()
        saved.setdefault("sessions", []).append(session_info() | ({"paused_arms": paused} if paused else {}))
        config_path.write_text(json.dumps(saved, indent=2), encoding="utf-8")
        return stream_from_dicts(saved["stream"]), paused
    _paused(pause, config, resume)  # a new run pauses nothing
    stream = build_stream(
        environment,
        config.n_tasks,
        task_types=task_set_types(environment, config.task_set),
        seed=config.seed,
        build_fraction=config.build_fraction,
        measure_split=config.measure_split,
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    payload = {
        "config": asdict(config),
        "stream": [t.to_dict() for t in stream],
        "started_at": datetime.now(UTC).isoformat(),
        "sessions": [session_info()],
    }
    config_path.write_text(json.dumps(payload, indent=2), encoding="utf-8")
    return stream, []


def _seed_records(config: BenchConfig, stream: list[BenchTask]) -> list:
    """The train records seeded arms learn from: `seed_per_type` of each task type the stream plays."""
    paths = [Path(p) for p in config.seed_from] or [Path("datasets") / f"{config.env}-train.jsonl"]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise ValueError(f"seed records not found: {', '.join(missing)} (pass --seed-from <train JSONL>)")
    records = [r for p in paths for r in load_records(p)]
    types = sorted({t.task_type for t in stream})
    return seeding_sample(records, types, config.seed_per_type)


def default_out_dir() -> Path:
    return Path("bench-runs") / datetime.now().strftime("%Y%m%d-%H%M%S")


def run_bench(
    lm: dspy.BaseLM,
    embedder: Any,
    out_dir: str | Path | None = None,
    options: BenchOptions | None = None,
    *,
    environment=None,
    console: Console | None = None,
    **overrides: Any,
) -> dict[str, Any]:
    """Runs the benchmark and writes its outputs to `out_dir` (default `bench-runs/<timestamp>`);
    returns the results dict (results.json).

    The settings are a `BenchOptions` (see its fields), or its fields as keyword arguments, or
    both (the keywords replace the object's fields); a keyword that is not a field is a TypeError.
    `environment` reuses an open environment (tests); by default `env`'s `task_set` is opened and
    closed here (with the ray executor, each worker opens its own and `environment` only draws
    the stream). `console` is where progress and the results table are printed."""
    o = BenchOptions.merged(options, overrides, "run_bench")
    console = console or Console()
    env = env_for_task_set(o.task_set, o.env)
    if o.world_seed is not None and env != "textworld":
        raise ValueError(f"--world-seed picks a persistent world: it applies to --env textworld, not {env}")
    agent_options(o.agent)  # an unknown variant fails before any work
    compiled = compiled_setting(o.compiled)
    runner = make_executor(o.executor, address=o.ray_address, workers=o.workers)  # before any work: Ray may be missing
    n_tasks = o.n_tasks if o.n_tasks is not None else (SMOKE_TASKS if o.smoke else DEFAULT_TASKS)
    max_steps = o.max_steps if o.max_steps is not None else (SMOKE_MAX_STEPS if o.smoke else DEFAULT_MAX_STEPS)
    if max_steps < 1:
        raise ValueError(f"--max-steps must be at least 1; got {max_steps}")
    config = BenchConfig(
        env=env,
        n_tasks=n_tasks,
        arms=parse_arms(o.arms),
        seed=o.seed,
        max_steps=max_steps,
        compiled=compiled,
        build_fraction=o.build_fraction,
        measure_split=o.measure_split,
        smoke=o.smoke,
        lm=o.lm_name,
        embedder=o.embedder_name,
        task_set=o.task_set,
        seed_from=[str(p) for p in (o.seed_from or [])],
        seed_per_type=o.seed_per_type,
        bank_url=redacted(o.bank_url) if o.bank_url else "",
        world_seed=o.world_seed,
        agent=o.agent,
        calibrate_on_build=o.calibrate_on_build,
    )
    out_dir = Path(out_dir) if out_dir is not None else default_out_dir()
    owned = environment is None
    world = {"world_seed": o.world_seed} if o.world_seed is not None else {}
    pinned = {"gold_cache": out_dir / GOLD_FILE} if env == "scienceworld" else {}
    environment = environment if environment is not None else open_task_set(env, o.task_set, **world, **pinned)
    try:
        stream, paused = _prepare_dir(out_dir, config, o.resume, environment, o.pause_arms)
        seeds = _seed_records(config, stream) if any(ARMS[a].seeded for a in config.arms) else None
        progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
        )
        # No DSPy cache: an arm whose prompt happens to equal another arm's (the first task, before
        # any memory) must still pay for its call, or its cost and wall time would be understated.
        lm = lm.copy(cache=False) if getattr(lm, "cache", False) else lm
        jobs = [
            ArmJob(
                name,
                stream,
                out_dir,
                env,
                o.task_set,
                max_steps,
                compiled,
                seeds if ARMS[name].seeded else None,
                o.bank_url or "",
                o.world_seed,
                o.agent,
                o.calibrate_on_build,
            )
            for name in config.arms
            if name not in paused
        ]
        with progress:
            records = runner.run_arms(jobs, lm, embedder, environment, progress)
        # A paused arm is reported over the tasks it played before.
        records |= {name: rows for name in paused if (rows := read_records(arm_path(out_dir, name)))}
        records = {name: records[name] for name in config.arms if name in records}
    finally:
        if owned:
            environment.close()
    return write_reports(
        out_dir,
        config,
        stream,
        records,
        console=console,
        mlflow=o.mlflow,
        experiment=o.experiment,
        n_resamples=o.n_resamples or DEFAULT_RESAMPLES,
    )


def report_run(
    out_dir: str | Path, *, console: Console | None = None, n_resamples: int | None = None
) -> dict[str, Any]:
    """Writes the reports of the run in `out_dir` from the records it holds so far, without
    playing a task or logging to MLflow: how a long run that is still going (or was stopped to be
    resumed later) reads. Arms with no record yet are left out; returns the results dict."""
    out_dir = Path(out_dir)
    config_path = out_dir / "config.json"
    if not config_path.is_file():
        raise FileNotFoundError(f"{out_dir} holds no benchmark run (no config.json)")
    saved = json.loads(config_path.read_text(encoding="utf-8"))
    known = BenchConfig.__dataclass_fields__
    config = BenchConfig(**{k: v for k, v in saved["config"].items() if k in known})
    records = {arm: rows for arm in config.arms if (rows := read_records(arm_path(out_dir, arm)))}
    if not records:
        raise ValueError(f"{out_dir} has no finished task yet: nothing to report")
    return write_reports(
        out_dir,
        config,
        stream_from_dicts(saved["stream"]),
        records,
        console=console or Console(),
        mlflow=False,
        n_resamples=n_resamples or DEFAULT_RESAMPLES,
    )
