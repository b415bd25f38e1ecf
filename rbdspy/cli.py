"""The `rbdspy` command. Every command that needs an LM or an embedder takes --lm / --embedder,
which default to $RBDSPY_LM / $RBDSPY_EMBEDDER and then to the embedded local models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

app = typer.Typer(help="rbdspy: ReasoningBank agent memory as a DSPy program.", no_args_is_help=True)
memory_app = typer.Typer(help="Inspect and manage a memory bank on disk.", no_args_is_help=True)
app.add_typer(memory_app, name="memory")
data_app = typer.Typer(help="Build labelled trajectory datasets from real environments.", no_args_is_help=True)
app.add_typer(data_app, name="data")
console = Console()

PathOpt = typer.Option(Path("bank"), "--path", "-p", help="The bank's directory.")
EmbedderOpt = typer.Option(None, "--embedder", envvar="RBDSPY_EMBEDDER", help="local | hash | any dspy.Embedder model string.")
LmOpt = typer.Option(None, "--lm", envvar="RBDSPY_LM", help="local | local-fast | any LiteLLM model string.")


def _open(path: Path, embedder: str | None = None, must_exist: bool = True):
    from rbdspy.memory import MemoryStore

    if must_exist and not (path / "memory.db").exists():
        raise typer.BadParameter(f"no memory bank at {path} (expected {path / 'memory.db'}); pass --path to an existing bank", param_hint="--path")
    if embedder is None:
        return MemoryStore(path)
    from rbdspy.lm import make_embedder

    return MemoryStore(path, embedder=make_embedder(embedder))


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _items_table(items, scores=None) -> Table:
    table = Table(show_lines=False)
    for column in ("id", "source", "scope", "title", "description", "uses"):
        table.add_column(column, overflow="fold")
    if scores is not None:
        table.add_column("score", justify="right")
    for i, item in enumerate(items):
        row = [item.id[:12], item.source, item.scope or "-", _short(item.title, 40), _short(item.description, 60), str(item.use_count)]
        if scores is not None:
            row.append(f"{scores[i]:.3f}")
        table.add_row(*row)
    return table


@memory_app.command("list")
def memory_list(
    path: Path = PathOpt,
    scope: Optional[str] = typer.Option(None, help="Only items of this scope."),
    limit: Optional[int] = typer.Option(None, help="At most this many items."),
    as_json: bool = typer.Option(False, "--json", help="One JSON item per line instead of a table."),
):
    """List the items of a bank, oldest first."""
    with _open(path) as store:
        items = store.list(scope=scope, limit=limit)
    if as_json:
        for item in items:
            typer.echo(item.model_dump_json())
        return
    console.print(_items_table(items))
    console.print(f"{len(items)} item(s)")


def _resolve_id(store, prefix: str) -> str:
    matches = [item.id for item in store.list() if item.id.startswith(prefix)]
    if len(matches) != 1:
        raise typer.BadParameter(f"{prefix!r} matches {len(matches)} items; give more of the id", param_hint="ID")
    return matches[0]


@memory_app.command("show")
def memory_show(item_id: str = typer.Argument(..., help="An item id or a unique prefix of one."), path: Path = PathOpt):
    """Show one item in full, with its provenance."""
    with _open(path) as store:
        item = store.get(_resolve_id(store, item_id))
    console.print_json(item.model_dump_json())


@memory_app.command("search")
def memory_search(
    query: str = typer.Argument(..., help="A task description to retrieve memory for."),
    path: Path = PathOpt,
    k: int = typer.Option(3, "-k", help="How many items."),
    scope: Optional[str] = typer.Option(None, help="Only items of this scope."),
    embedder: Optional[str] = EmbedderOpt,
):
    """Retrieve the items the bank would show an agent for QUERY."""
    with _open(path, embedder or "local") as store:
        hits = store.search(query, k=k, scope=scope)
    console.print(_items_table([item for item, _ in hits], [score for _, score in hits]))


@memory_app.command("export")
def memory_export(out: Path = typer.Argument(..., help="JSONL file to write."), path: Path = PathOpt):
    """Write every item as one JSON line (no vectors)."""
    with _open(path) as store:
        n = store.export_jsonl(out)
    console.print(f"exported {n} item(s) to {out}")


@memory_app.command("import")
def memory_import(
    src: Path = typer.Argument(..., exists=True, dir_okay=False, help="JSONL file of items."),
    path: Path = PathOpt,
    embedder: Optional[str] = EmbedderOpt,
):
    """Add items from a JSONL export, embedding them with this bank's embedder. Items whose id
    is already in the bank are skipped."""
    with _open(path, embedder or "local", must_exist=False) as store:
        n = store.import_jsonl(src)
    console.print(f"imported {n} item(s) into {path}")


@memory_app.command("stats")
def memory_stats(path: Path = PathOpt, as_json: bool = typer.Option(False, "--json", help="Print JSON.")):
    """Counts by source kind and scope, the embedder, the retrieval key, sizes."""
    with _open(path) as store:
        stats = store.stats()
    if as_json:
        typer.echo(json.dumps(stats, indent=2, default=str))
        return
    table = Table(show_header=False)
    for key, value in stats.items():
        table.add_row(key, json.dumps(value, default=str) if isinstance(value, (dict, list)) else str(value))
    console.print(table)


@memory_app.command("rm")
def memory_rm(
    item_ids: list[str] = typer.Argument(..., help="Item ids (or unique prefixes) to remove."),
    path: Path = PathOpt,
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
):
    """Remove items. Export first if you may want them back."""
    with _open(path) as store:
        ids = [_resolve_id(store, prefix) for prefix in item_ids]
        if not yes and not typer.confirm(f"Remove {len(ids)} item(s) from {path}?"):
            raise typer.Abort()
        n = store.remove(ids)
    console.print(f"removed {n} item(s)")


@app.command("demo")
def demo(
    path: Path = typer.Option(Path("bank"), "--path", "-p", help="Where the bank is kept (reused if it exists)."),
    tasks: int = typer.Option(4, "--tasks", "-n", help="How many demo tasks to run (at most 6)."),
    k: int = typer.Option(1, "-k", help="Memory items retrieved per task."),
    lm: Optional[str] = LmOpt,
    embedder: Optional[str] = EmbedderOpt,
):
    """Run a short stream of tasks through an agent wrapped in ReasoningBank (offline by default)."""
    from rbdspy.demo import run_demo
    from rbdspy.lm import make_embedder, make_lm

    run_demo(make_lm(lm), make_embedder(embedder), path, n_tasks=tasks, k=k, console=console)


@data_app.command("build")
def data_build(
    env: str = typer.Option(..., "--env", help="scienceworld | twx"),
    split: str = typer.Option("train", "--split", help="train | dev | test"),
    n: int = typer.Option(100, "--n", help="How many records to write."),
    out: Optional[Path] = typer.Option(None, "--out", help="JSONL to write (default datasets/<env>-<split>.jsonl)."),
    seed: int = typer.Option(0, "--seed"),
    task_types: Optional[str] = typer.Option(None, "--task-types", help="Comma-separated task types (default: all)."),
    gold_cache: Optional[Path] = typer.Option(None, "--gold-cache", help="JSON file pinning gold paths, for reproducible rebuilds."),
    agent_lm: Optional[str] = typer.Option(None, "--agent-lm", help="Also add rollouts of EnvAgent on this LM (e.g. local)."),
    max_steps: int = typer.Option(30, "--max-steps", help="Step limit of agent rollouts."),
):
    """Write trajectories labelled by the environment's score: gold paths, broken gold paths the
    environment confirms as failures, and optionally agent rollouts. Every record is replayed
    before it is written; records that do not reproduce their label are discarded."""
    from rbdspy.envs import EnvAgent, build_dataset, make_env

    out = out or Path("datasets") / f"{env}-{split}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    options = {"gold_cache": gold_cache} if gold_cache else {}
    with make_env(env, **options) as environment:
        agent = None
        if agent_lm:
            import dspy

            from rbdspy.lm import make_lm

            dspy.configure(lm=make_lm(agent_lm))
            agent = EnvAgent(environment, max_steps=max_steps)
        types = [t.strip() for t in task_types.split(",")] if task_types else None
        report = build_dataset(environment, split, n, out, agent=agent, seed=seed, task_types=types)
    console.print(report)
    console.print(f"wrote {out}")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
