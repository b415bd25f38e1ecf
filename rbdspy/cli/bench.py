"""`rbdspy bench`: does memory make the agent better, and at what cost? Checks the options,
builds one `BenchOptions` and hands it to `rbdspy.bench.run_bench` (or, with --report-only, runs
`report_run`). --agent's help is made from the variants themselves (`rbdspy.bench.variant_help`),
so it says what each one, "auto" first, really plays with."""

from __future__ import annotations

from pathlib import Path

import typer

import rbdspy.bench
from rbdspy.bench import (
    DEFAULT_MAX_STEPS,
    DEFAULT_TASKS,
    SMOKE_MAX_STEPS,
    SMOKE_TASKS,
    BenchOptions,
    parse_arms,
    report_run,
)
from rbdspy.bench.arms import ARM_SETS
from rbdspy.bench.executors import EXECUTORS
from rbdspy.bench.tasks import StreamTooLongError
from rbdspy.bench.truth_recheck import recheck_truth as recheck_run_truth
from rbdspy.bench.variant_help import agent_help
from rbdspy.cli.common import ENV_HELP, EmbedderOpt, LmOpt, check_env, get_console, models
from rbdspy.envs.registry import task_set_help, with_world_seeds
from rbdspy.envs.task_sets import env_for_task_set
from rbdspy.ray_support import NotPicklableError, RayMissingError


def bench(
    env: str | None = typer.Option(
        None,
        "--env",
        help=f"{ENV_HELP}; default: the one --task-set is played in (twx for demo and lift, textworld for the "
        "house sets).",
    ),
    tasks: int | None = typer.Option(
        None,
        "--tasks",
        "-n",
        help="Tasks in the stream: --build-fraction of them built on train, the rest measured on dev (default "
        f"{DEFAULT_TASKS}; {SMOKE_TASKS} with --smoke).",
    ),
    arms: str = typer.Option(
        "default",
        "--arms",
        help=f"Comma list of arms or sets: {', '.join(ARM_SETS)}, or arm names (listed in docs/guides/bench.md#arms; "
        "an unknown name is refused with the list).",
    ),
    seed: int = typer.Option(0, "--seed", help="Which variations are drawn, and the bootstrap's seed."),
    max_steps: int | None = typer.Option(
        None, "--max-steps", help=f"Step limit per task (default {DEFAULT_MAX_STEPS}; {SMOKE_MAX_STEPS} with --smoke)."
    ),
    out: Path | None = typer.Option(None, "--out", help="Output directory (default bench-runs/<timestamp>)."),
    resume: bool = typer.Option(False, "--resume", help="Continue the run in --out, skipping finished tasks."),
    smoke: bool = typer.Option(
        False, "--smoke", help=f"CI size: {SMOKE_TASKS} tasks x {SMOKE_MAX_STEPS} steps (unless --tasks, --max-steps)."
    ),
    compiled: Path | None = typer.Option(
        None,
        "--compiled",
        help="Compiled judge/extractor prompts for every bank: the output directory of `rbdspy compile` or a "
        "bank's saved .json (default: the hand-written prompts).",
    ),
    experiment: str = typer.Option("rbdspy-bench", "--experiment", help="MLflow experiment."),
    lm: str | None = LmOpt,
    embedder: str | None = EmbedderOpt,
    task_set: str = typer.Option(
        "demo",
        "--task-set",
        help=f"Games the stream draws from: {task_set_help()}",
    ),
    world_seed: int | None = typer.Option(
        None,
        "--world-seed",
        help="The world a house stream is played in (default 1; --env textworld only). A world that holds fewer "
        "quests than the stream asks is refused before the first task.",
    ),
    agent: str = typer.Option("auto", "--agent", help=agent_help()),
    pause_arms: str | None = typer.Option(
        None,
        "--pause-arms",
        help="With --resume: arms of the run not played this session (comma list); they keep their records, "
        "are reported over the tasks they played, and a later resume plays them on.",
    ),
    calibrate_on_build: bool = typer.Option(
        False,
        "--calibrate-on-build",
        help="Arms labelled by the probability judge learn from the environment's labels on the build tasks, "
        "the judge scores each; its band is calibrated on them before the first measured task.",
    ),
    seed_from: list[Path] | None = typer.Option(
        None, "--seed-from", help="Train JSONL the seeded arms learn from (default datasets/<env>-train.jsonl)."
    ),
    fresh_from: list[Path] | None = typer.Option(
        None,
        "--fresh-from",
        help="An earlier run's directory (repeatable) whose tasks this stream never draws: fresh measured tasks.",
    ),
    seed_per_type: int = typer.Option(2, "--seed-per-type", help="Seed records per task type (seeded arms)."),
    build_fraction: float = typer.Option(
        0.5, "--build-fraction", help="Share of the stream built on train variations; the rest is measured on dev."
    ),
    report_only: bool = typer.Option(
        False, "--report-only", help="Write the reports of the run in --out from its records so far; play nothing."
    ),
    recheck_truth: bool = typer.Option(
        False,
        "--recheck-truth",
        help="With --report-only: check the truth of the lessons the run wrote again, with this version's checker "
        "(persistent worlds), before reporting.",
    ),
    executor: str = typer.Option(
        "local",
        "--executor",
        help="local (arms one after another, in this process) | ray (one Ray task per arm; needs the scale "
        "extra). Same records either way.",
    ),
    ray_address: str | None = typer.Option(
        None,
        "--ray-address",
        help="With --executor ray: the cluster to join (e.g. auto, host:6379); default a local ray.init(). "
        "--out must then be a path every node sees.",
    ),
    workers: int | None = typer.Option(
        None, "--workers", help="With --executor ray: the local cluster's CPUs, and the most arms played at once."
    ),
    bank_url: str | None = typer.Option(
        None,
        "--bank-url",
        help="Keep the arms' banks on this PostgreSQL server (postgresql://..., one namespace per run and arm) "
        "instead of under --out/banks.",
    ),
):
    """Does memory make the agent better, and at what cost? Plays the same task stream with each
    arm (each from an empty bank) and reports success, steps, LM cost and a paired bootstrap
    interval against no-memory; writes JSON, Markdown and PNGs and logs to MLflow."""
    console = get_console()
    if env is not None:
        env = check_env(env)
    try:
        env = env_for_task_set(task_set, env)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--env/--task-set") from error
    if world_seed is not None and (env not in with_world_seeds() or world_seed < 0):
        seeded = " or ".join(f"--env {name}" for name in with_world_seeds())
        raise typer.BadParameter(f"a non-negative world seed, with {seeded}", param_hint="--world-seed")
    if executor not in EXECUTORS:
        raise typer.BadParameter(f"{executor!r} is not one of {', '.join(EXECUTORS)}", param_hint="--executor")
    if executor != "ray" and (ray_address is not None or workers is not None):
        raise typer.BadParameter("applies to --executor ray only", param_hint="--ray-address/--workers")
    if workers is not None and workers < 1:
        raise typer.BadParameter(f"must be at least 1; got {workers}", param_hint="--workers")
    try:
        arm_names = parse_arms(arms)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--arms") from error
    if resume and out is None:
        raise typer.BadParameter("--resume needs --out, the directory of the run to continue", param_hint="--resume")
    if compiled is not None and not compiled.exists():
        raise typer.BadParameter(f"no compiled prompts at {compiled}", param_hint="--compiled")
    if recheck_truth and not report_only:
        raise typer.BadParameter("applies to --report-only only", param_hint="--recheck-truth")
    if report_only:
        if out is None:
            raise typer.BadParameter("--report-only needs --out, the directory of a run", param_hint="--report-only")
        try:
            if recheck_truth:
                recheck_run_truth(out)
            report_run(out, console=console)
        except (FileNotFoundError, ValueError) as error:
            raise typer.BadParameter(str(error), param_hint="--out") from error
        return
    options = BenchOptions(
        env=env,
        n_tasks=tasks,
        arms=arm_names,
        seed=seed,
        max_steps=max_steps,
        compiled=compiled,
        resume=resume,
        smoke=smoke,
        lm_name=lm or "local",
        embedder_name=embedder or "local",
        experiment=experiment,
        task_set=task_set,
        seed_from=seed_from,
        seed_per_type=seed_per_type,
        build_fraction=build_fraction,
        executor=executor,
        ray_address=ray_address,
        bank_url=bank_url,
        workers=workers,
        world_seed=world_seed,
        agent=agent,
        calibrate_on_build=calibrate_on_build,
        pause_arms=pause_arms,
        fresh_from=fresh_from,
    )
    try:
        # The settings as one object, which run_bench resolves once and passes down. Looked up on
        # rbdspy.bench at each call, so that a stand-in set there (a test) is the one called.
        rbdspy.bench.run_bench(*models(lm, embedder), out, options, console=console)
    except (RayMissingError, NotPicklableError) as error:
        raise typer.BadParameter(str(error), param_hint="--executor") from error
    except ConnectionError as error:
        raise typer.BadParameter(str(error).splitlines()[0], param_hint="--bank-url") from error
    except StreamTooLongError as error:  # refused before the first task: one line, what to ask instead
        typer.echo(f"rbdspy bench: {error}", err=True)
        raise typer.Exit(1) from error
    except (FileExistsError, ValueError) as error:
        raise typer.BadParameter(str(error), param_hint="--out/--resume/--tasks/--build-fraction") from error
