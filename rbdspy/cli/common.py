"""What the command groups of `rbdspy` share: the console they print to, the options spelled the
same in every command (--lm, --embedder, --namespace, --memories, --rollouts), the models --lm and
--embedder name, and the checks that turn a bad value into one error line naming the option and
exit code 2 (typer.BadParameter)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from rbdspy.cli import seams
from rbdspy.envs.capabilities import PersistentWorlds
from rbdspy.envs.registry import declaring, env_help
from rbdspy.envs.task_sets import env_name
from rbdspy.lessons.auto import DEFAULT_K, WORLD_K
from rbdspy.memory.postgres import is_postgres_url

NamespaceOpt = typer.Option(
    None,
    "--namespace",
    envvar="RBDSPY_NAMESPACE",
    help="On a postgresql:// bank: the tenant whose items are read and written (none: read all, write 'default').",
)
EmbedderOpt = typer.Option(
    None, "--embedder", envvar="RBDSPY_EMBEDDER", help="local | hash | any dspy.Embedder model string."
)
LmOpt = typer.Option(None, "--lm", envvar="RBDSPY_LM", help="local | local-fast | any LiteLLM model string.")
# One vocabulary for every command: --env (the environments' names, from their registry entries),
# --memories (items retrieved per task), --rollouts (MaTTS).
ENV_HELP = env_help()
# None: the retriever's k="auto" (`rbdspy.lessons.auto`), which the help states from its constants
# and the environments whose worlds persist from the registry.
MemoriesOpt = typer.Option(
    None,
    "--memories",
    help=f"Memory items retrieved per task, at most (default: {WORLD_K} where the tasks share a world that "
    f"persists, as in {' and '.join(declaring(PersistentWorlds))}; else {DEFAULT_K}).",
)
RolloutsOpt = typer.Option(
    3,
    "--rollouts",
    help="With --matts: rollouts (parallel) or 1 rollout + rollouts-1 refinements (sequential) per task.",
)


def get_console() -> Console:
    """The console the commands print to (`seams.console`, looked up at each call)."""
    return seams.console


def models(lm: str | None, embedder: str | None) -> tuple:
    """The LM and the embedder that --lm and --embedder name (`seams._models`, looked up at each
    call: `seams.load_models` unless swapped)."""
    return seams._models(lm, embedder)


def deprecated_alias(ctx: typer.Context, param: str, new: str, old: str, old_value):
    """The value of option `param` (`new`), or of its deprecated spelling `old` when that was
    used instead, with a one-line warning on stderr. Both at once is an error."""
    value = ctx.params[param]
    if old_value is None:
        return value
    source = ctx.get_parameter_source(param)  # by name: typer ships its own copy of click's enum
    if source is not None and source.name != "DEFAULT":
        raise typer.BadParameter(f"{old} is the deprecated spelling of {new}; give only {new}", param_hint=new)
    typer.echo(f"Warning: {old} is deprecated; use {new} (it does the same).", err=True)
    return old_value


def check_env(env: str) -> str:
    """--env as the environments are named (`rbdspy.envs.registry`, the same for every command; an
    alias gives the name it stands for); any other name, an old spelling ("house") included, is one
    error line naming the option."""
    try:
        return env_name(env)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--env") from error


def bank_location(path: str) -> Path | str:
    """--path as MemoryStore takes it: a URL stays a string (a Path would fold its //)."""
    return path if is_postgres_url(path) else Path(path)
