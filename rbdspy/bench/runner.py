"""Runs the arms over the paired stream, each from an empty bank: task by task in this process
(every arm on task i before any arm on task i+1), or each arm as a Ray task (executors.py), with
the same records either way. The settings are resolved once (settings.py) and that one
`BenchOptions` is what the stream, the jobs, the players and the reports are made from.

Layout of an output directory:

    config.json            the settings and the stream (reused verbatim by --resume; what it
                           records of the settings, and what must match to resume: settings.py)
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
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import dspy
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from rbdspy.bench.arm_job import ArmJob
from rbdspy.bench.arms import ARMS, BASELINE
from rbdspy.bench.executors import make_executor
from rbdspy.bench.options import BenchOptions
from rbdspy.bench.player import SPEND_FIELDS, arm_namespace, run_arm, task_record  # noqa: F401  (public here too)
from rbdspy.bench.provenance import session_info
from rbdspy.bench.records import arm_path, read_records
from rbdspy.bench.report import write_reports
from rbdspy.bench.settings import (  # noqa: F401  (public here too)
    DEFAULT_MAX_STEPS,
    DEFAULT_TASKS,
    RESUME_KEYS,
    SMOKE_MAX_STEPS,
    SMOKE_TASKS,
    compiled_setting,
    open_environment,
    paused_names,
    resolve,
    resume_mismatches,
    run_record,
    saved_record,
    tasks_of_runs,
)
from rbdspy.bench.stats import DEFAULT_RESAMPLES
from rbdspy.bench.tasks import BenchTask, build_stream, stream_from_dicts
from rbdspy.datasets.dataset import load_records, seeding_sample
from rbdspy.envs.task_sets import task_set_types


def _paused(spec: str | list[str] | None, arms: list[str], resume: bool) -> list[str]:
    """The arms `spec` names to pause this session, checked against the run's `arms`."""
    names = paused_names(spec)
    if not names:
        return []
    if not resume:
        raise ValueError("--pause-arms applies to a resumed run (--resume): a new run plays every arm it names")
    unknown = [a for a in names if a not in arms]
    if unknown:
        raise ValueError(f"--pause-arms: {', '.join(unknown)} not among the run's arms ({', '.join(arms)})")
    if BASELINE in names:
        raise ValueError(f"--pause-arms: {BASELINE} is what every arm is compared with on each task; it plays on")
    return names


def _prepare_dir(out_dir: Path, settings: BenchOptions, environment) -> tuple[BenchOptions, list[BenchTask], list[str]]:
    """The settings to play with (on resume, with the run's arms first), the stream to play and
    the arms paused this session (`pause_arms`, checked): the stored stream on resume (after
    checking the settings match), a new one otherwise. Refuses to mix a new run into a directory
    that holds one."""
    config_path = out_dir / "config.json"
    if config_path.is_file():
        saved = json.loads(config_path.read_text(encoding="utf-8"))
        if not settings.resume:
            raise FileExistsError(
                f"{out_dir} already holds a benchmark run: pass --resume to continue it, or another --out"
            )
        mismatched = resume_mismatches(saved["config"], settings)
        if mismatched:
            raise ValueError(f"cannot resume {out_dir} with different settings ({', '.join(mismatched)})")
        # Resuming may add arms; the results cover every arm the run has played.
        settings = settings.replace(arms=list(dict.fromkeys(saved["config"]["arms"] + settings.arms)))
        paused = _paused(settings.pause_arms, settings.arms, resume=True)
        saved["config"]["arms"] = settings.arms
        saved["resumed_at"] = datetime.now(UTC).isoformat()
        saved.setdefault("sessions", []).append(session_info() | ({"paused_arms": paused} if paused else {}))
        config_path.write_text(json.dumps(saved, indent=2), encoding="utf-8")
        return settings, stream_from_dicts(saved["stream"]), paused
    _paused(settings.pause_arms, settings.arms, settings.resume)  # a new run pauses nothing
    left_out = tasks_of_runs(settings.fresh_from or [])
    stream = build_stream(
        environment,
        settings.n_tasks,
        task_types=task_set_types(environment, settings.task_set),
        seed=settings.seed,
        build_fraction=settings.build_fraction,
        measure_split=settings.measure_split,
        exclude=left_out,
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    payload = {
        "config": run_record(settings),
        "stream": [t.to_dict() for t in stream],
        "started_at": datetime.now(UTC).isoformat(),
        "sessions": [session_info()],
    }
    if settings.fresh_from:
        payload["fresh_from"] = {"runs": list(settings.fresh_from), "tasks_left_out": sorted(left_out)}
    config_path.write_text(json.dumps(payload, indent=2), encoding="utf-8")
    return settings, stream, []


def _seed_records(settings: BenchOptions, stream: list[BenchTask]) -> list:
    """The train records seeded arms learn from: `seed_per_type` of each task type the stream plays."""
    paths = [Path(p) for p in settings.seed_from] or [Path("datasets") / f"{settings.env}-train.jsonl"]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise ValueError(f"seed records not found: {', '.join(missing)} (pass --seed-from <train JSONL>)")
    records = [r for p in paths for r in load_records(p)]
    types = sorted({t.task_type for t in stream})
    return seeding_sample(records, types, settings.seed_per_type)


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
    They are resolved once (`rbdspy.bench.settings.resolve`), and checked there before any work;
    config.json and results.json record them (`rbdspy.bench.settings.run_record`).
    `environment` reuses an open environment (tests); by default `env`'s `task_set` is opened and
    closed here (with the ray executor, each worker opens its own and `environment` only draws
    the stream). `console` is where progress and the results table are printed."""
    settings = resolve(BenchOptions.merged(options, overrides, "run_bench"))
    console = console or Console()
    # Before any work: Ray may be missing.
    runner = make_executor(settings.executor, address=settings.ray_address, workers=settings.workers)
    out_dir = Path(out_dir) if out_dir is not None else default_out_dir()
    owned = environment is None
    environment = environment if environment is not None else open_environment(settings, out_dir)
    try:
        settings, stream, paused = _prepare_dir(out_dir, settings, environment)
        seeds = _seed_records(settings, stream) if any(ARMS[a].seeded for a in settings.arms) else None
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
            ArmJob(name, settings, stream, out_dir, seeds if ARMS[name].seeded else None)
            for name in settings.arms
            if name not in paused
        ]
        with progress:
            records = runner.run_arms(jobs, lm, embedder, environment, progress)
        # A paused arm is reported over the tasks it played before.
        records |= {name: rows for name in paused if (rows := read_records(arm_path(out_dir, name)))}
        records = {name: records[name] for name in settings.arms if name in records}
    finally:
        if owned:
            environment.close()
    return write_reports(
        out_dir,
        run_record(settings),
        stream,
        records,
        console=console,
        mlflow=settings.mlflow,
        experiment=settings.experiment,
        n_resamples=settings.n_resamples or DEFAULT_RESAMPLES,
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
    config = saved_record(saved["config"])
    records = {arm: rows for arm in config["arms"] if (rows := read_records(arm_path(out_dir, arm)))}
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
