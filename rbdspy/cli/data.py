"""`rbdspy data ...`: labelled trajectory datasets from real environments (build, from-bench, stats)."""

from __future__ import annotations

import json
from pathlib import Path

import dspy
import typer

from rbdspy.agent import EnvAgent
from rbdspy.bench.labelled import labelled_from_run
from rbdspy.cli.common import ENV_HELP, check_env, get_console
from rbdspy.cli.preflight import lm_for
from rbdspy.datasets import build_dataset
from rbdspy.datasets.dataset import write_records
from rbdspy.datasets.dataset_stats import file_table, overlap, type_table
from rbdspy.envs import make_env
from rbdspy.envs.task_sets import open_task_set

data_app = typer.Typer(help="Build labelled trajectory datasets from real environments.", no_args_is_help=True)


def _game_params(values: list[str]) -> dict[str, str]:
    """`GAME:KEY=V,KEY=V` strings -> {game: "KEY=V,KEY=V"}."""
    out = {}
    for value in values:
        game, sep, spec = value.partition(":")
        if not sep or not game.strip() or "=" not in spec:
            raise typer.BadParameter(
                f"{value!r} is not GAME:KEY=VALUE[,KEY=VALUE...] (e.g. coin:numLocations=3)", param_hint="--params"
            )
        out[game.strip()] = spec.strip()
    return out


@data_app.command("build", short_help="Write trajectories labelled by the environment's score.")
def data_build(
    env: str = typer.Option(..., "--env", help=ENV_HELP),
    split: str = typer.Option("train", "--split", help="train | dev | test"),
    n: int = typer.Option(100, "--n", help="How many records to write."),
    out: Path | None = typer.Option(None, "--out", help="JSONL to write (default datasets/<env>-<split>.jsonl)."),
    seed: int = typer.Option(0, "--seed"),
    task_types: str | None = typer.Option(None, "--task-types", help="Comma-separated task types (default: all)."),
    gold_cache: Path | None = typer.Option(
        None, "--gold-cache", help="JSON file pinning gold paths, for reproducible rebuilds."
    ),
    agent_lm: str | None = typer.Option(
        None, "--agent-lm", help="Also add rollouts of EnvAgent on this LM (e.g. local)."
    ),
    max_steps: int = typer.Option(30, "--max-steps", help="Step limit of agent rollouts."),
    agent_only: bool = typer.Option(
        False, "--agent-only", help="Only agent rollouts (needs --agent-lm), every label kept."
    ),
    params: list[str] | None = typer.Option(
        None, "--params", help="TextWorld-Express game parameters, GAME:KEY=V,KEY=V (repeatable)."
    ),
):
    """Write trajectories labelled by the environment's score: gold paths, broken gold paths the
    environment confirms as failures, and optionally agent rollouts. Every record is replayed
    before it is written; records that do not reproduce their label are discarded."""
    console = get_console()
    env = check_env(env)  # an alias gives the name it stands for (the default --out is named by it)
    out = out or Path("datasets") / f"{env}-{split}.jsonl"
    if agent_only and not agent_lm:
        raise typer.BadParameter(
            "--agent-only needs --agent-lm (the LM whose rollouts to record)", param_hint="--agent-only"
        )
    agent_model = lm_for(agent_lm, "--agent-lm") if agent_lm else None  # checked before anything is written
    out.parent.mkdir(parents=True, exist_ok=True)
    options: dict = {"gold_cache": gold_cache} if gold_cache else {}
    if params:
        options["params"] = _game_params(params)
    with make_env(env, **options) as environment:
        agent = None
        if agent_model is not None:
            # JSONAdapter: the embedded engine then constrains each action to the output schema.
            dspy.configure(lm=agent_model, adapter=dspy.JSONAdapter())
            agent = EnvAgent(environment, max_steps=max_steps)
        types = [t.strip() for t in task_types.split(",")] if task_types else None
        report = build_dataset(
            environment, split, n, out, agent=agent, seed=seed, task_types=types, gold=not agent_only
        )
    console.print(report)
    console.print(f"wrote {out}")


@data_app.command("stats", short_help="Count records per file, split, task type, label and provenance.")
def data_stats(files: list[Path] = typer.Argument(..., exists=True, dir_okay=False, help="Dataset JSONL files.")):
    """Counts per file, split, task type, label and provenance, as Markdown (the datasheet's tables)."""
    table, _ = file_table(files)
    typer.echo(table + "\n\n" + type_table(files) + f"\n\nTask ids found in more than one split: {overlap(files)}")


@data_app.command("from-bench", short_help="Write a bench run's trajectories as labelled records.")
def data_from_bench(
    run: Path = typer.Argument(..., exists=True, file_okay=False, help="A `rbdspy bench` run directory (--out)."),
    out: Path = typer.Option(..., "--out", help="JSONL to write."),
    arms: str | None = typer.Option(None, "--arms", help="Comma-separated arms (default: every arm of the run)."),
    phase: str | None = typer.Option(None, "--phase", help="build | measure (default: both)."),
):
    """Write a bench run's trajectories as labelled records: each distinct (task, actions) an arm
    played, replayed in the run's environment and labelled by it (kind `agent`), ending with the
    final answer the agent gave, as the bank's judge read it."""
    config_path = run / "config.json"
    if not config_path.is_file():
        raise typer.BadParameter(f"{run} holds no benchmark run (no config.json)", param_hint="RUN")
    if phase not in (None, "build", "measure"):
        raise typer.BadParameter(f"{phase!r} is not build or measure", param_hint="--phase")
    config = json.loads(config_path.read_text(encoding="utf-8"))["config"]
    names = [a.strip() for a in arms.split(",") if a.strip()] if arms else None
    with open_task_set(config["env"], config.get("task_set", "demo"), config.get("world_seed")) as environment:
        try:
            records, skipped = labelled_from_run(
                run, environment, arms=names, phase=phase, max_steps=config.get("max_steps")
            )
        except ValueError as error:
            raise typer.BadParameter(str(error), param_hint="--arms") from error
    written = write_records(out, records)
    left = ", ".join(f"{n} {why}" for why, n in sorted(skipped.items())) or "none"
    get_console().print(f"wrote {written} records to {out} (left out: {left})")
