"""`rbdspy memory ...`: inspect and manage a memory bank (a directory, or a postgresql:// URL):
list, show, search, export, import, stats, restore, seed, doctor, migrate, rm. What goes wrong with
the bank itself is one error line naming the bank and exit code 2 (`_open`)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from contextlib import contextmanager
from pathlib import Path

import dspy
import typer
from rich.progress import Progress
from rich.table import Table

import rbdspy.lm
from rbdspy.cli.common import EmbedderOpt, LmOpt, NamespaceOpt, bank_location, get_console, models
from rbdspy.cli.preflight import refuse
from rbdspy.datasets.dataset import load_records, seeding_sample
from rbdspy.loop.reasoning_bank import ReasoningBank
from rbdspy.memory import InvalidItemError, MemoryStore
from rbdspy.memory.doctor import UnrepairableBankError, diagnose
from rbdspy.memory.doctor import repair as repair_bank
from rbdspy.memory.migrate import migrate
from rbdspy.memory.postgres import redacted

memory_app = typer.Typer(help="Inspect and manage a memory bank on disk.", no_args_is_help=True)

PathOpt = typer.Option(
    "bank",
    "--path",
    "-p",
    help="The bank: a directory, or a postgresql://user@host/db URL (pip install rbdspy[scale]).",
)


@contextmanager
def _open(path: str, embedder: str | None = None, must_exist: bool = True, namespace: str | None = None):
    """The bank at `path`, for one command. What goes wrong with the bank itself (a lost or
    damaged database, an unreachable server, a row that does not validate, a wrong embedder) is
    one error line naming the bank, exit code 2, not a traceback."""
    location = bank_location(path)
    if isinstance(location, Path) and must_exist and not (location / "memory.db").exists():
        raise typer.BadParameter(
            f"no memory bank at {path} (expected {location / 'memory.db'}); pass --path to an existing bank",
            param_hint="--path",
        )

    def bad_bank(error: Exception) -> typer.BadParameter:
        return typer.BadParameter(f"{redacted(path)}: {str(error).splitlines()[0]}", param_hint="--path")

    try:
        if embedder is None:
            store = MemoryStore(location, namespace=namespace)
        else:
            store = MemoryStore(location, embedder=rbdspy.lm.make_embedder(embedder), namespace=namespace)
    except (FileNotFoundError, ValueError, ConnectionError, ImportError, sqlite3.DatabaseError) as error:
        raise bad_bank(error) from error
    try:
        with store:
            yield store
    except (InvalidItemError, sqlite3.DatabaseError) as error:
        raise bad_bank(error) from error


ID_SHOWN = 12  # characters of an item's id a table shows (`memory show` takes a prefix)
# Item tables (`memory list`, `memory search`) print one line per item at any width: the id whole,
# the other cells cut with an ellipsis. The most a cell shows on a wide console:
_WIDEST = {"scope": 16, "title": 40, "description": 60}
_DESCRIPTION_MIN = 16  # room for less of a description than this leaves it out (`memory show` has it)
_TITLE_MIN = 24  # room for less of a title than this leaves the scope out
_CELL = 3  # what a column adds to its text: a space each side and a border


def _items_table(items, scores=None, width: int = 80, mark_retired: bool = True) -> Table:
    """The items as a table at most `width` columns wide, one line per item: every id whole, a
    cell with no room for its whole text cut with an ellipsis. The title comes first: the
    description is shown only beside the whole title (up to 40 characters) and at least 16
    characters of itself, the scope only beside at least 24 characters of the title. A retired
    item's value says "retired" (`mark_retired`, unless every item listed is)."""
    rows = [
        {
            "id": item.id[:ID_SHOWN],
            "source": item.source,
            "scope": item.scope or "-",
            "title": item.title,
            "description": item.description,
            "uses": str(item.use_count),
            "won/lost": f"{item.successes}/{item.failures}",
            "value": f"{item.value:.2f}" + (" retired" if item.retired and mark_retired else ""),
            **({"score": f"{scores[i]:.3f}"} if scores is not None else {}),
        }
        for i, item in enumerate(items)
    ]
    names = ["id", "source", "scope", "title", "description", "uses", "won/lost", "value"]
    names += ["score"] if scores is not None else []
    natural = {name: max([len(name)] + [len(row[name]) for row in rows]) for name in names}
    widths = {name: min(natural[name], _WIDEST.get(name, natural[name])) for name in names}

    def room() -> int:  # for the title and the description: what the other columns leave of `width`
        return width - 1 - _CELL * len(names) - sum(widths[n] for n in names if n not in ("title", "description"))

    if room() - widths["title"] >= min(widths["description"], _DESCRIPTION_MIN):
        widths["description"] = min(widths["description"], room() - widths["title"])
    else:
        names.remove("description")
        if room() < min(widths["title"], _TITLE_MIN):
            names.remove("scope")
        widths["title"] = max(1, min(widths["title"], room()))
    table = Table(show_lines=False)
    for name in names:
        table.add_column(
            name,
            no_wrap=True,
            overflow="ellipsis",
            min_width=widths[name] if name == "id" else None,
            max_width=widths[name],
            justify="right" if name == "score" else "left",
        )
    for row in rows:
        table.add_row(*(row[name] for name in names))
    return table


@memory_app.command("list", short_help="List a bank's items, oldest first (--retired: the retired ones).")
def memory_list(
    path: str = PathOpt,
    namespace: str | None = NamespaceOpt,
    scope: str | None = typer.Option(None, help="Only items of this scope."),
    limit: int | None = typer.Option(None, help="At most this many items."),
    as_json: bool = typer.Option(False, "--json", help="One JSON item per line instead of a table."),
    retired: bool = typer.Option(
        False, "--retired", help="List the retired items (kept, never served) instead of the live ones."
    ),
):
    """List the items of a bank, oldest first: the live ones, or with --retired the retired ones."""
    console = get_console()
    with _open(path, namespace=namespace) as store:
        items = [i for i in store.list(scope=scope) if i.retired == retired][:limit]
        invalid = sorted(store.invalid_ids)
    if as_json:
        for item in items:
            typer.echo(item.model_dump_json())
        return
    console.print(_items_table(items, width=console.width, mark_retired=not retired))
    console.print(f"{len(items)} {'retired ' if retired else ''}item(s)")
    if invalid:
        console.print(
            f"[red]{len(invalid)} stored row(s) do not validate and were skipped: {', '.join(invalid[:5])}; "
            f"remove them with `rbdspy memory rm ID --path {path}`[/red]"
        )


def _resolve_id(store, prefix: str) -> str:
    matches = [id for id in store.ids() if id.startswith(prefix)]
    if not matches:
        raise typer.BadParameter(f"no item in {store.path} has an id starting with {prefix!r}", param_hint="ID")
    if len(matches) > 1:
        raise typer.BadParameter(f"{prefix!r} matches {len(matches)} items; give more of the id", param_hint="ID")
    return matches[0]


@memory_app.command("show", short_help="Show one item in full, with its provenance.")
def memory_show(
    item_id: str = typer.Argument(..., help="An item id or a unique prefix of one."),
    path: str = PathOpt,
    namespace: str | None = NamespaceOpt,
):
    """Show one item in full, with its provenance."""
    console = get_console()
    with _open(path, namespace=namespace) as store:
        item = store.get(_resolve_id(store, item_id))
    console.print_json(item.model_dump_json())


# Items learned on one task share its vector, so they tie on the task's similarity: among those, the
# item whose own text is closest to the query (the record "Actions that did it: Eat the cashew."
# for "Eat the cashew") comes first. A pool larger than k lets a tie at the k-th place be settled so.
SEARCH_POOL = 4
_TIE = 1e-4


def closest_first(store, query: str, hits: list) -> list:
    """`hits` (item, task similarity), best first, with items tied on the task's similarity ordered
    by their own text's similarity to `query`."""
    if len(hits) < 2:
        return hits
    _, item_vectors = store.embed_items([item for item, _ in hits])
    own = item_vectors @ store.embed([query])[0]
    order = sorted(range(len(hits)), key=lambda i: (-round(hits[i][1] / _TIE), -float(own[i])))
    return [hits[i] for i in order]


@memory_app.command("search", short_help="Retrieve the items the bank would show an agent for QUERY.")
def memory_search(
    query: str = typer.Argument(..., help="A task description to retrieve memory for."),
    path: str = PathOpt,
    namespace: str | None = NamespaceOpt,
    k: int = typer.Option(3, "-k", help="How many items."),
    scope: str | None = typer.Option(None, help="Only items of this scope."),
    embedder: str | None = EmbedderOpt,
):
    """Retrieve the items the bank would show an agent for QUERY."""
    console = get_console()
    with _open(path, embedder or "local", namespace=namespace) as store:
        hits = closest_first(store, query, store.search(query, k=k * SEARCH_POOL, scope=scope))[:k]
    console.print(_items_table([item for item, _ in hits], [score for _, score in hits], width=console.width))


@memory_app.command("export", short_help="Write every item as one JSON line (no vectors).")
def memory_export(
    out: Path = typer.Argument(..., help="JSONL file to write."),
    path: str = PathOpt,
    namespace: str | None = NamespaceOpt,
):
    """Write every item as one JSON line (no vectors)."""
    console = get_console()
    with _open(path, namespace=namespace) as store:
        n = store.export_jsonl(out)
    console.print(f"exported {n} item(s) to {out}")


@memory_app.command("import", short_help="Add items from a JSONL export, skipping ids already in the bank.")
def memory_import(
    src: Path = typer.Argument(..., exists=True, dir_okay=False, help="JSONL file of items."),
    path: str = PathOpt,
    namespace: str | None = NamespaceOpt,
    embedder: str | None = EmbedderOpt,
):
    """Add items from a JSONL export, embedding them with this bank's embedder. Items whose id
    is already in the bank are skipped."""
    console = get_console()
    location = bank_location(path)
    created = isinstance(location, Path) and not location.exists()
    try:
        with _open(path, embedder or "local", must_exist=False, namespace=namespace) as store:
            n = store.import_jsonl(src)
    except Exception as error:
        if created:  # a failed import into a new bank leaves no empty bank behind
            shutil.rmtree(location, ignore_errors=True)
        if isinstance(error, (ValueError, OSError)):
            raise typer.BadParameter(str(error).splitlines()[0], param_hint="SRC") from error
        raise
    console.print(f"imported {n} item(s) into {path}")


@memory_app.command("stats", short_help="Count items by source and scope; show the embedder and sizes.")
def memory_stats(
    path: str = PathOpt,
    namespace: str | None = NamespaceOpt,
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """Counts by source kind and scope, the embedder, the retrieval key, sizes."""
    console = get_console()
    with _open(path, namespace=namespace) as store:
        stats = store.stats()
    if as_json:
        typer.echo(json.dumps(stats, indent=2, default=str))
        return
    # Read as a user would: a fresh handle has not loaded its indexes yet, and stats needs no embedder.
    index = stats.get("index") or {}
    if stats.get("backend") == "sqlite" and not index.get("loaded"):
        stats["index"] = "not loaded yet: built or read from disk at the first search (that is normal)"
    if stats.get("current_embedder") is None:
        stats["current_embedder"] = "none needed to read stats (searching needs one: --embedder)"
    table = Table(show_header=False)
    for key, value in stats.items():
        shown = "-" if value is None else value
        table.add_row(key, json.dumps(shown, default=str) if isinstance(shown, (dict, list)) else str(shown))
    console.print(table)


@memory_app.command("restore", short_help="Serve retired items again.")
def memory_restore(
    item_ids: list[str] = typer.Argument(..., help="Ids (or unique prefixes) of retired items to serve again."),
    path: str = PathOpt,
    namespace: str | None = NamespaceOpt,
):
    """Serve retired items again (utility ranking retires an item that was confidently harmful)."""
    console = get_console()
    with _open(path, namespace=namespace) as store:
        n = store.set_retired([_resolve_id(store, prefix) for prefix in item_ids], retired=False)
    console.print(f"restored {n} item(s) in {path}")


@memory_app.command("seed", short_help="Seed a bank from labelled train trajectories.")
def memory_seed(
    sources: list[Path] = typer.Option(..., "--from", exists=True, dir_okay=False, help="Train JSONL (repeatable)."),
    path: str = PathOpt,
    namespace: str | None = NamespaceOpt,
    per_type: int | None = typer.Option(None, "--per-type", help="At most this many records of each task type."),
    lm: str | None = LmOpt,
    embedder: str | None = EmbedderOpt,
):
    """Seed a bank from labelled train trajectories (gold paths, agent rollouts) before any task is
    played: the environment's labels are trusted and the extractor distils each record."""
    console = get_console()
    try:
        records = [r for source in sources for r in load_records(source)]
        chosen = seeding_sample(records, per_type=per_type or len(records) or 1)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--from") from error
    task_lm, task_embedder = models(lm, embedder)
    with (
        MemoryStore(bank_location(path), embedder=task_embedder, namespace=namespace) as store,
        dspy.context(lm=task_lm, adapter=dspy.JSONAdapter()),
    ):
        # The agent is never called while seeding; the bank needs one to be a bank.
        bank = ReasoningBank(agent=dspy.Predict("task, memory -> answer"), store=store)
        with Progress(console=console) as progress:
            bar = progress.add_task("seeding", total=len(chosen))
            items = []
            for record in chosen:
                items += bank.learn_from([record])
                progress.advance(bar)
        total = len(store)
    console.print(f"seeded {len(items)} item(s) from {len(chosen)} record(s); {path} holds {total}")


@memory_app.command("doctor", short_help="Check a bank and, with --repair, fix what can be fixed.")
def memory_doctor(
    path: str = PathOpt,
    repair: bool = typer.Option(
        False,
        "--repair",
        help="Quarantine rows that do not validate, delete derived index files and orphan temp files.",
    ),
    sample: int = typer.Option(50, "--sample", help="Stored vectors used as queries to check search against exact."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
):
    """Check a bank (SQLite integrity, rows that do not validate, orphan files, search against exact
    search) and, with --repair, fix what can be fixed without losing a valid item. Exit 1 while a
    problem remains."""
    console = get_console()
    location = bank_location(path)
    if not isinstance(location, Path):
        raise typer.BadParameter(
            "doctor checks a bank in a directory (SQLite + FAISS files); a PostgreSQL bank keeps no derived "
            "files, and `rbdspy memory list` names any row that does not validate",
            param_hint="--path",
        )
    if not location.is_dir():
        raise typer.BadParameter(f"no memory bank at {path}", param_hint="--path")
    try:
        done = repair_bank(location) if repair else None
    except UnrepairableBankError as error:  # refused before anything was touched
        refuse(str(error), code=1)
    report = diagnose(location, sample=sample)
    if done is not None:
        report["repaired"] = done
    if as_json:
        typer.echo(json.dumps(report, indent=2))
    else:
        for line in report["problems"] or [f"{path}: healthy ({report.get('items', 0)} items)"]:
            console.print(line)
        if done is not None:
            console.print(f"repaired: {json.dumps(done)}")
    raise typer.Exit(1 if report["problems"] else 0)


@memory_app.command("migrate", short_help="Copy every item, with its vectors and statistics, to another bank.")
def memory_migrate(
    source: str = typer.Option(..., "--from", help="The bank to copy from (a directory or a postgresql:// URL)."),
    target: str = typer.Option(..., "--to", help="The bank to copy into (created if new)."),
    from_namespace: str | None = typer.Option(None, "--from-namespace", help="Only this namespace of the source."),
    namespace: str | None = typer.Option(None, "--namespace", help="The namespace to write into on the target."),
):
    """Copy every item, with its stored vectors and usage statistics, into another bank (e.g. a
    directory into PostgreSQL): nothing is re-embedded, the source is only read, and items already
    in the target are skipped, so an interrupted migration is finished by running it again."""
    console = get_console()
    with _open(source, namespace=from_namespace) as src, _open(target, must_exist=False, namespace=namespace) as dst:
        try:
            copied, skipped = migrate(src, dst)
        except ValueError as error:
            raise typer.BadParameter(str(error).splitlines()[0], param_hint="--to") from error
        total = len(dst)
    console.print(f"copied {copied} item(s), {skipped} already there; {dst.path} holds {total}")


@memory_app.command("rm", short_help="Remove items (export first if you may want them back).")
def memory_rm(
    item_ids: list[str] = typer.Argument(..., help="Item ids (or unique prefixes) to remove."),
    path: str = PathOpt,
    namespace: str | None = NamespaceOpt,
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
):
    """Remove items. Export first if you may want them back."""
    console = get_console()
    with _open(path, namespace=namespace) as store:
        ids = [_resolve_id(store, prefix) for prefix in item_ids]
        if not yes and not typer.confirm(f"Remove {len(ids)} item(s) from {path}?"):
            raise typer.Abort()
        n = store.remove(ids)
    console.print(f"removed {n} item(s)")
