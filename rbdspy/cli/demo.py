"""`rbdspy demo`: a short stream of environment tasks played by EnvAgent wrapped in ReasoningBank."""

from __future__ import annotations

import typer

from rbdspy.cli import demo_run
from rbdspy.cli.common import (
    ENV_HELP,
    EmbedderOpt,
    LmOpt,
    MemoriesOpt,
    NamespaceOpt,
    RolloutsOpt,
    bank_location,
    check_env,
    deprecated_alias,
    get_console,
    models,
)
from rbdspy.cli.demo_run import MATTS_MODES, failed_everywhere


def demo(
    ctx: typer.Context,
    path: str = typer.Option(
        "bank", "--path", "-p", help="Where the bank is kept (reused if it exists): a directory or a postgresql:// URL."
    ),
    namespace: str | None = NamespaceOpt,
    env: str = typer.Option("textworld", "--env", help=ENV_HELP),
    tasks: int = typer.Option(3, "--tasks", "-n", help="How many environment tasks to play."),
    max_steps: int = typer.Option(10, "--max-steps", help="Step limit per task."),
    memories: int | None = MemoriesOpt,
    matts: str = typer.Option("none", "--matts", help="Memory-aware test-time scaling: none | parallel | sequential."),
    rollouts: int = RolloutsOpt,
    lm: str | None = LmOpt,
    embedder: str | None = EmbedderOpt,
    old_memories: int | None = typer.Option(None, "-k", hidden=True, help="Deprecated: --memories."),
    old_rollouts: int | None = typer.Option(None, "--k", hidden=True, help="Deprecated: --rollouts."),
):
    """Play a short stream of environment tasks with EnvAgent wrapped in ReasoningBank (offline by default).

    By default (--env textworld), quests in the house, one persistent TextWorld world, that fetch
    the same thing: a later quest is offered the way an earlier one won, and a step played on
    memory's suggestion is marked "(memory)". Each step is printed as the agent plays it, then one
    block per task. Exits 1 when the agent failed on every task."""
    console = get_console()
    memories = deprecated_alias(ctx, "memories", "--memories", "-k", old_memories)
    rollouts = deprecated_alias(ctx, "rollouts", "--rollouts", "--k", old_rollouts)
    env = check_env(env)
    if matts not in MATTS_MODES:
        raise typer.BadParameter(f"{matts!r} is not one of {', '.join(MATTS_MODES)}", param_hint="--matts")
    if rollouts < 1:
        raise typer.BadParameter(f"must be at least 1; got {rollouts}", param_hint="--rollouts")
    # Looked up on rbdspy.cli.demo_run at each call, so that a stand-in set there (a test) is the one called.
    rows = demo_run.run_demo(
        *models(lm, embedder),
        bank_location(path),
        env=env,
        n_tasks=tasks,
        k=memories,
        max_steps=max_steps,
        console=console,
        matts=matts,
        rollouts=rollouts,
        namespace=namespace,
    )
    if failed_everywhere(rows):
        typer.echo(
            f"rbdspy demo: the agent failed on every task ({len(rows)}/{len(rows)}); first: {rows[0]['error']}",
            err=True,
        )
        raise typer.Exit(1)
