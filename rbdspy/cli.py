"""The `rbdspy` command. Every command that needs an LM or an embedder takes --lm / --embedder,
which default to $RBDSPY_LM / $RBDSPY_EMBEDDER and then to the embedded local models."""

from __future__ import annotations

import json
import shutil
from contextlib import contextmanager
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from rbdspy.bench.arms import ARM_SETS

app = typer.Typer(help="rbdspy: ReasoningBank agent memory as a DSPy program.", no_args_is_help=True)
memory_app = typer.Typer(help="Inspect and manage a memory bank on disk.", no_args_is_help=True)
app.add_typer(memory_app, name="memory")
data_app = typer.Typer(help="Build labelled trajectory datasets from real environments.", no_args_is_help=True)
app.add_typer(data_app, name="data")
console = Console()

PathOpt = typer.Option(
    "bank",
    "--path",
    "-p",
    help="The bank: a directory, or a postgresql://user@host/db URL (pip install rbdspy[scale]).",
)
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
AdapterOpt = typer.Option(
    "json",
    "--adapter",
    help="json (JSONAdapter: constrained decoding on the local LM, as demo and bench run the bank) "
    "| chat (ChatAdapter).",
)
# One vocabulary for every command: --memories (items retrieved per task), --rollouts (MaTTS).
MemoriesOpt = typer.Option(1, "--memories", help="Memory items retrieved per task.")
RolloutsOpt = typer.Option(
    3,
    "--rollouts",
    help="With --matts: rollouts (parallel) or 1 rollout + rollouts-1 refinements (sequential) per task.",
)


def _deprecated_alias(ctx: typer.Context, param: str, new: str, old: str, old_value):
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


def _check_env(env: str, offered: tuple[str, ...] | None = None) -> None:
    from rbdspy.envs.task_sets import DEMO_ENVS

    offered = offered or DEMO_ENVS
    if env not in offered:
        raise typer.BadParameter(f"{env!r} is not one of {', '.join(offered)}", param_hint="--env")


def _models(lm: str | None, embedder: str | None) -> tuple:
    """The LM and the embedder that --lm and --embedder name (the embedded ones by default)."""
    from rbdspy.lm import make_embedder, make_lm

    try:  # both are checked before any work: a wrong name is one line and exit 2
        return make_lm(lm), make_embedder(embedder)
    except ValueError as error:
        hint = "--lm" if "LM spec" in str(error) else "--embedder"
        raise typer.BadParameter(str(error).splitlines()[0], param_hint=hint) from error


def _bank(path: str) -> Path | str:
    """--path as MemoryStore takes it: a URL stays a string (a Path would fold its //)."""
    from rbdspy.memory.postgres import is_postgres_url

    return path if is_postgres_url(path) else Path(path)


@contextmanager
def _open(path: str, embedder: str | None = None, must_exist: bool = True, namespace: str | None = None):
    """The bank at `path`, for one command. What goes wrong with the bank itself (a lost or
    damaged database, an unreachable server, a row that does not validate, a wrong embedder) is
    one error line naming the bank, exit code 2, not a traceback."""
    import sqlite3

    from rbdspy.memory import InvalidItemError, MemoryStore

    location = _bank(path)
    if isinstance(location, Path) and must_exist and not (location / "memory.db").exists():
        raise typer.BadParameter(
            f"no memory bank at {path} (expected {location / 'memory.db'}); pass --path to an existing bank",
            param_hint="--path",
        )

    def bad_bank(error: Exception) -> typer.BadParameter:
        from rbdspy.memory.postgres import redacted

        return typer.BadParameter(f"{redacted(path)}: {str(error).splitlines()[0]}", param_hint="--path")

    try:
        if embedder is None:
            store = MemoryStore(location, namespace=namespace)
        else:
            from rbdspy.lm import make_embedder

            store = MemoryStore(location, embedder=make_embedder(embedder), namespace=namespace)
    except (FileNotFoundError, ValueError, ConnectionError, ImportError, sqlite3.DatabaseError) as error:
        raise bad_bank(error) from error
    try:
        with store:
            yield store
    except (InvalidItemError, sqlite3.DatabaseError) as error:
        raise bad_bank(error) from error


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _items_table(items, scores=None) -> Table:
    table = Table(show_lines=False)
    for column in ("id", "source", "scope", "title", "description", "uses", "won/lost", "value"):
        table.add_column(column, overflow="fold")
    if scores is not None:
        table.add_column("score", justify="right")
    for i, item in enumerate(items):
        row = [
            item.id[:12],
            item.source,
            item.scope or "-",
            _short(item.title, 40),
            _short(item.description, 60),
            str(item.use_count),
            f"{item.successes}/{item.failures}",
            f"{item.value:.2f}" + (" retired" if item.retired else ""),
        ]
        if scores is not None:
            row.append(f"{scores[i]:.3f}")
        table.add_row(*row)
    return table


@memory_app.command("list")
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
    with _open(path, namespace=namespace) as store:
        items = [i for i in store.list(scope=scope) if i.retired == retired][:limit]
        invalid = sorted(store.invalid_ids)
    if as_json:
        for item in items:
            typer.echo(item.model_dump_json())
        return
    console.print(_items_table(items))
    console.print(f"{len(items)} item(s)")
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


@memory_app.command("show")
def memory_show(
    item_id: str = typer.Argument(..., help="An item id or a unique prefix of one."),
    path: str = PathOpt,
    namespace: str | None = NamespaceOpt,
):
    """Show one item in full, with its provenance."""
    with _open(path, namespace=namespace) as store:
        item = store.get(_resolve_id(store, item_id))
    console.print_json(item.model_dump_json())


@memory_app.command("search")
def memory_search(
    query: str = typer.Argument(..., help="A task description to retrieve memory for."),
    path: str = PathOpt,
    namespace: str | None = NamespaceOpt,
    k: int = typer.Option(3, "-k", help="How many items."),
    scope: str | None = typer.Option(None, help="Only items of this scope."),
    embedder: str | None = EmbedderOpt,
):
    """Retrieve the items the bank would show an agent for QUERY."""
    with _open(path, embedder or "local", namespace=namespace) as store:
        hits = store.search(query, k=k, scope=scope)
    console.print(_items_table([item for item, _ in hits], [score for _, score in hits]))


@memory_app.command("export")
def memory_export(
    out: Path = typer.Argument(..., help="JSONL file to write."),
    path: str = PathOpt,
    namespace: str | None = NamespaceOpt,
):
    """Write every item as one JSON line (no vectors)."""
    with _open(path, namespace=namespace) as store:
        n = store.export_jsonl(out)
    console.print(f"exported {n} item(s) to {out}")


@memory_app.command("import")
def memory_import(
    src: Path = typer.Argument(..., exists=True, dir_okay=False, help="JSONL file of items."),
    path: str = PathOpt,
    namespace: str | None = NamespaceOpt,
    embedder: str | None = EmbedderOpt,
):
    """Add items from a JSONL export, embedding them with this bank's embedder. Items whose id
    is already in the bank are skipped."""
    location = _bank(path)
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


@memory_app.command("stats")
def memory_stats(
    path: str = PathOpt,
    namespace: str | None = NamespaceOpt,
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """Counts by source kind and scope, the embedder, the retrieval key, sizes."""
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


@memory_app.command("restore")
def memory_restore(
    item_ids: list[str] = typer.Argument(..., help="Ids (or unique prefixes) of retired items to serve again."),
    path: str = PathOpt,
    namespace: str | None = NamespaceOpt,
):
    """Serve retired items again (utility ranking retires an item that was confidently harmful)."""
    with _open(path, namespace=namespace) as store:
        n = store.set_retired([_resolve_id(store, prefix) for prefix in item_ids], retired=False)
    console.print(f"restored {n} item(s) in {path}")


@memory_app.command("seed")
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
    import dspy
    from rich.progress import Progress

    from rbdspy.envs.dataset import load_records, seeding_sample
    from rbdspy.memory import MemoryStore
    from rbdspy.modules import ReasoningBank

    try:
        records = [r for source in sources for r in load_records(source)]
        chosen = seeding_sample(records, per_type=per_type or len(records) or 1)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--from") from error
    task_lm, task_embedder = _models(lm, embedder)
    with (
        MemoryStore(_bank(path), embedder=task_embedder, namespace=namespace) as store,
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


@memory_app.command("doctor")
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
    from rbdspy.memory.doctor import diagnose
    from rbdspy.memory.doctor import repair as repair_bank

    location = _bank(path)
    if not isinstance(location, Path):
        raise typer.BadParameter(
            "doctor checks a bank in a directory (SQLite + FAISS files); a PostgreSQL bank keeps no derived "
            "files, and `rbdspy memory list` names any row that does not validate",
            param_hint="--path",
        )
    if not location.is_dir():
        raise typer.BadParameter(f"no memory bank at {path}", param_hint="--path")
    done = repair_bank(location) if repair else None
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


@memory_app.command("migrate")
def memory_migrate(
    source: str = typer.Option(..., "--from", help="The bank to copy from (a directory or a postgresql:// URL)."),
    target: str = typer.Option(..., "--to", help="The bank to copy into (created if new)."),
    from_namespace: str | None = typer.Option(None, "--from-namespace", help="Only this namespace of the source."),
    namespace: str | None = typer.Option(None, "--namespace", help="The namespace to write into on the target."),
):
    """Copy every item, with its stored vectors and usage statistics, into another bank (e.g. a
    directory into PostgreSQL): nothing is re-embedded, the source is only read, and items already
    in the target are skipped, so an interrupted migration is finished by running it again."""
    from rbdspy.memory.migrate import migrate

    with _open(source, namespace=from_namespace) as src, _open(target, must_exist=False, namespace=namespace) as dst:
        try:
            copied, skipped = migrate(src, dst)
        except ValueError as error:
            raise typer.BadParameter(str(error).splitlines()[0], param_hint="--to") from error
        total = len(dst)
    console.print(f"copied {copied} item(s), {skipped} already there; {dst.path} holds {total}")


@memory_app.command("rm")
def memory_rm(
    item_ids: list[str] = typer.Argument(..., help="Item ids (or unique prefixes) to remove."),
    path: str = PathOpt,
    namespace: str | None = NamespaceOpt,
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
):
    """Remove items. Export first if you may want them back."""
    with _open(path, namespace=namespace) as store:
        ids = [_resolve_id(store, prefix) for prefix in item_ids]
        if not yes and not typer.confirm(f"Remove {len(ids)} item(s) from {path}?"):
            raise typer.Abort()
        n = store.remove(ids)
    console.print(f"removed {n} item(s)")


@app.command("demo")
def demo(
    ctx: typer.Context,
    path: str = typer.Option(
        "bank", "--path", "-p", help="Where the bank is kept (reused if it exists): a directory or a postgresql:// URL."
    ),
    namespace: str | None = NamespaceOpt,
    env: str = typer.Option("twx", "--env", help="twx (small TextWorld-Express games) | scienceworld"),
    tasks: int = typer.Option(3, "--tasks", "-n", help="How many environment tasks to play."),
    max_steps: int = typer.Option(10, "--max-steps", help="Step limit per task."),
    memories: int = MemoriesOpt,
    matts: str = typer.Option("none", "--matts", help="Memory-aware test-time scaling: none | parallel | sequential."),
    rollouts: int = RolloutsOpt,
    lm: str | None = LmOpt,
    embedder: str | None = EmbedderOpt,
    old_memories: int | None = typer.Option(None, "-k", hidden=True, help="Deprecated: --memories."),
    old_rollouts: int | None = typer.Option(None, "--k", hidden=True, help="Deprecated: --rollouts."),
):
    """Play a short stream of environment tasks with EnvAgent wrapped in ReasoningBank (offline by default).

    Each step is printed as the agent plays it, then one block per task. Exits 1 when the agent
    failed on every task."""
    from rbdspy.demo import MATTS_MODES, failed_everywhere, run_demo

    memories = _deprecated_alias(ctx, "memories", "--memories", "-k", old_memories)
    rollouts = _deprecated_alias(ctx, "rollouts", "--rollouts", "--k", old_rollouts)
    _check_env(env)
    if matts not in MATTS_MODES:
        raise typer.BadParameter(f"{matts!r} is not one of {', '.join(MATTS_MODES)}", param_hint="--matts")
    if rollouts < 1:
        raise typer.BadParameter(f"must be at least 1; got {rollouts}", param_hint="--rollouts")
    rows = run_demo(
        *_models(lm, embedder),
        _bank(path),
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


@app.command("bench")
def bench(
    env: str | None = typer.Option(
        None,
        "--env",
        help="twx (small TextWorld-Express games) | scienceworld | textworld (persistent worlds); default: the "
        "one --task-set is played in.",
    ),
    tasks: int | None = typer.Option(
        None,
        "--tasks",
        "-n",
        help="Tasks in the stream: --build-fraction of them built on train, the rest measured on dev (default 12).",
    ),
    arms: str = typer.Option(
        "default",
        "--arms",
        help=f"Comma list of arms or sets: {', '.join(ARM_SETS)}, or arm names (see README).",
    ),
    seed: int = typer.Option(0, "--seed", help="Which variations are drawn, and the bootstrap's seed."),
    max_steps: int | None = typer.Option(None, "--max-steps", help="Step limit per task (default 8; 2 with --smoke)."),
    out: Path | None = typer.Option(None, "--out", help="Output directory (default bench-runs/<timestamp>)."),
    resume: bool = typer.Option(False, "--resume", help="Continue the run in --out, skipping finished tasks."),
    smoke: bool = typer.Option(False, "--smoke", help="CI size: 6 tasks x 2 steps."),
    compiled: bool = typer.Option(
        True, "--compiled/--uncompiled", help="The shipped compiled judge/extractor prompts, or the hand-written ones."
    ),
    experiment: str = typer.Option("rbdspy-bench", "--experiment", help="MLflow experiment."),
    lm: str | None = LmOpt,
    embedder: str | None = EmbedderOpt,
    task_set: str = typer.Option(
        "demo",
        "--task-set",
        help="Games the stream draws from: demo | lift | house (quests in one persistent TextWorld world) | "
        "house-shuffled (every task in a world of its own).",
    ),
    world_seed: int | None = typer.Option(
        None, "--world-seed", help="The world a house stream is played in (default 1; --env textworld only)."
    ),
    agent: str = typer.Option(
        "plain",
        "--agent",
        help="The agent every arm plays with: plain | status (where it is, what it carries) | guard (no action "
        "repeated from the same state) | loop (both) | suggest (memory's next admissible action shown first) | "
        "loop-suggest (all three) | focus (actions naming what the task names first) | full (all four).",
    ),
    seed_from: list[Path] | None = typer.Option(
        None, "--seed-from", help="Train JSONL the seeded arms learn from (default datasets/<env>-train.jsonl)."
    ),
    seed_per_type: int = typer.Option(2, "--seed-per-type", help="Seed records per task type (seeded arms)."),
    build_fraction: float = typer.Option(
        0.5, "--build-fraction", help="Share of the stream built on train variations; the rest is measured on dev."
    ),
    report_only: bool = typer.Option(
        False, "--report-only", help="Write the reports of the run in --out from its records so far; play nothing."
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
    from rbdspy.bench import parse_arms, run_bench
    from rbdspy.bench.executors import EXECUTORS
    from rbdspy.envs.task_sets import BENCH_ENVS, env_for_task_set
    from rbdspy.scale import NotPicklableError, RayMissingError

    if env is not None:
        _check_env(env, BENCH_ENVS)
    try:
        env = env_for_task_set(task_set, env)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--env/--task-set") from error
    if world_seed is not None and (env != "textworld" or world_seed < 0):
        raise typer.BadParameter("a non-negative world seed, with --env textworld", param_hint="--world-seed")
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
    if report_only:
        from rbdspy.bench import report_run

        if out is None:
            raise typer.BadParameter("--report-only needs --out, the directory of a run", param_hint="--report-only")
        try:
            report_run(out, console=console)
        except (FileNotFoundError, ValueError) as error:
            raise typer.BadParameter(str(error), param_hint="--out") from error
        return
    try:
        run_bench(
            *_models(lm, embedder),
            out,
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
            console=console,
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
        )
    except (RayMissingError, NotPicklableError) as error:
        raise typer.BadParameter(str(error), param_hint="--executor") from error
    except ConnectionError as error:
        raise typer.BadParameter(str(error).splitlines()[0], param_hint="--bank-url") from error
    except (FileExistsError, ValueError) as error:
        raise typer.BadParameter(str(error), param_hint="--out/--resume/--tasks/--build-fraction") from error


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


@data_app.command("build")
def data_build(
    env: str = typer.Option(..., "--env", help="scienceworld | twx"),
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
    from rbdspy.envs import EnvAgent, build_dataset, make_env

    out = out or Path("datasets") / f"{env}-{split}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    if agent_only and not agent_lm:
        raise typer.BadParameter(
            "--agent-only needs --agent-lm (the LM whose rollouts to record)", param_hint="--agent-only"
        )
    options: dict = {"gold_cache": gold_cache} if gold_cache else {}
    if params:
        options["params"] = _game_params(params)
    with make_env(env, **options) as environment:
        agent = None
        if agent_lm:
            import dspy

            from rbdspy.lm import make_lm

            # JSONAdapter: the embedded engine then constrains each action to the output schema.
            dspy.configure(lm=make_lm(agent_lm), adapter=dspy.JSONAdapter())
            agent = EnvAgent(environment, max_steps=max_steps)
        types = [t.strip() for t in task_types.split(",")] if task_types else None
        report = build_dataset(
            environment, split, n, out, agent=agent, seed=seed, task_types=types, gold=not agent_only
        )
    console.print(report)
    console.print(f"wrote {out}")


@data_app.command("stats")
def data_stats(files: list[Path] = typer.Argument(..., exists=True, dir_okay=False, help="Dataset JSONL files.")):
    """Counts per file, split, task type, label and provenance, as Markdown (the datasheet's tables)."""
    from rbdspy.envs.dataset_stats import file_table, overlap, type_table

    table, _ = file_table(files)
    typer.echo(table + "\n\n" + type_table(files) + f"\n\nTask ids found in more than one split: {overlap(files)}")


# ---- compile, eval, ui: tuned prompts from labelled trajectories, tracked in MLflow -------------

CompileTargetOpt = typer.Option("judge", "--target", help="judge | extractors | all")
TrainOpt = typer.Option(..., "--train", help="Training JSONL files or globs (repeatable, or comma-separated).")
DevOpt = typer.Option(..., "--dev", help="Dev JSONL files or globs, scored before and after compiling (repeatable).")
DesignOpt = typer.Option(
    "probability", "--design", help="Judge design: probability | rationale | checklist | self-consistency | confidence."
)
BudgetTokensOpt = typer.Option(
    1800,
    "--budget-tokens",
    help="Show trajectories through the evidence renderer within this many tokens (0: the character-cut "
    "rendering from before the evidence renderer). Compile and eval a judge with the same value.",
)


def _judge_view(targets: list[str], design: str, budget_tokens: int | None) -> int | None:
    """Checks --design and --budget-tokens (a usage error naming the option) and returns the
    renderer argument the programs take: the token budget, or None (0) for the character-cut rendering."""
    from rbdspy.modules.judge import DEFAULT_JUDGE_DESIGN, JUDGE_DESIGNS
    from rbdspy.render import MIN_BUDGET_TOKENS

    if design not in JUDGE_DESIGNS:
        raise typer.BadParameter(f"{design!r} is not one of {', '.join(JUDGE_DESIGNS)}", param_hint="--design")
    if design != DEFAULT_JUDGE_DESIGN and "judge" not in targets:
        raise typer.BadParameter("applies to the judge only (--target judge or all)", param_hint="--design")
    if budget_tokens == 0:
        return None
    if budget_tokens is not None and budget_tokens < MIN_BUDGET_TOKENS:
        raise typer.BadParameter(
            f"must be 0 or at least {MIN_BUDGET_TOKENS}; got {budget_tokens}", param_hint="--budget-tokens"
        )
    return budget_tokens


def _lm_or_none(spec: str | None):
    if spec is None:
        return None
    from rbdspy.lm import make_lm

    return make_lm(spec)


def _report_table(title: str, metrics: dict[str, float]) -> Table:
    table = Table(title=title, show_header=False)
    for key, value in metrics.items():
        table.add_row(key, f"{value:.3f}")
    return table


@app.command("compile")
def compile_cmd(
    target: str = CompileTargetOpt,
    optimizer: str = typer.Option(
        "gepa", "--optimizer", help="gepa | miprov2 | bootstrap | labeled | pool (judge: written strategies scored)"
    ),
    train: list[str] = TrainOpt,
    dev: list[str] = DevOpt,
    budget: int | None = typer.Option(
        None,
        "--budget",
        help="Metric calls the optimizer may spend, per target (default: sized for the local LM, see README).",
    ),
    out: Path = typer.Option(Path("compiled"), "--out", help="Directory for judge.json / extractors.json."),
    train_limit: int | None = typer.Option(
        None, "--train-limit", help="Train records used, sampled balanced by label."
    ),
    dev_limit: int | None = typer.Option(
        None, "--dev-limit", help="Dev records scored before and after, sampled balanced by label."
    ),
    max_demos: int | None = typer.Option(
        None, "--max-demos", help="Few-shot demos per predictor (bootstrap, labeled)."
    ),
    seed: int = typer.Option(0, "--seed"),
    threads: int = typer.Option(1, "--threads", help="Parallel program calls (1 for the embedded local LM)."),
    experiment: str = typer.Option("rbdspy", "--experiment", help="MLflow experiment."),
    log_model: bool = typer.Option(
        True, "--log-model/--no-log-model", help="Also log the program with mlflow.dspy.log_model."
    ),
    lm: str | None = LmOpt,
    reflection_lm: str | None = typer.Option(
        None,
        "--reflection-lm",
        help="LM that proposes instructions (GEPA reflection, MIPROv2 proposer); default: --lm.",
    ),
    rubric_lm: str | None = typer.Option(
        None, "--rubric-lm", help="Also grade extracted lessons with this LM (one more call per metric call)."
    ),
    adapter: str = AdapterOpt,
    design: str = DesignOpt,
    budget_tokens: int | None = BudgetTokensOpt,
):
    """Compile the judge and/or the extractors against labelled trajectories; save them as DSPy
    JSON in --out and log the run to MLflow. `ReasoningBank(..., compiled=OUT)` uses them."""
    import dspy

    from rbdspy.lm import make_lm
    from rbdspy.optimizers import compile_program, compile_settings
    from rbdspy.optimizers.recipes import check, estimate_seconds

    targets = ["judge", "extractors"] if target == "all" else [target]
    try:
        for name in targets:
            check(name, optimizer)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--target/--optimizer") from error
    renderer = _judge_view(targets, design, budget_tokens)
    from rbdspy.modules.judge import DEFAULT_JUDGE_DESIGN  # the extractors have one design: the default's name

    task_lm = make_lm(lm)
    dspy.configure(lm=task_lm, adapter=_adapter(adapter))
    reflection = _lm_or_none(reflection_lm)
    rubric = _lm_or_none(rubric_lm)
    for name in targets:
        settings = compile_settings(name, optimizer, in_all=len(targets) > 1, budget=budget, dev_limit=dev_limit)
        minutes = estimate_seconds(name, optimizer, settings.budget, settings.dev_limit) / 60
        console.print(
            f"[bold]{name}[/bold] with {optimizer}: budget {settings.budget} metric calls "
            f"(about {minutes:.0f} min on the embedded local LM)"
        )
        try:
            result = compile_program(
                name,
                optimizer,
                train,
                dev,
                out_dir=out,
                budget=budget,
                lm=task_lm,
                reflection_lm=reflection,
                rubric_lm=rubric,
                train_limit=train_limit,
                dev_limit=dev_limit,
                max_demos=max_demos,
                seed=seed,
                num_threads=threads,
                in_all=len(targets) > 1,
                experiment=experiment,
                log_model=log_model,
                extra_params={"adapter": adapter},
                design=design if name == "judge" else DEFAULT_JUDGE_DESIGN,
                renderer=renderer,
            )
        except (FileNotFoundError, ValueError) as error:
            raise typer.BadParameter(str(error), param_hint="--train/--dev/--budget") from error
        if result.before is not None:
            table = Table(title=f"{name}: dev ({len(result.after.rows)} records)")
            for column in ("metric", "before", "after"):
                table.add_column(column)
            for key in result.before.metrics:
                table.add_row(key, f"{result.before.metrics[key]:.3f}", f"{result.after.metrics[key]:.3f}")
            console.print(table)
        console.print(f"saved {result.path} (MLflow run {result.run_id}; `rbdspy ui` to browse)")


def _adapter(name: str):
    """The DSPy adapter a compile or eval runs under: the same as the bank will run under."""
    import dspy

    adapters = {"json": dspy.JSONAdapter, "chat": dspy.ChatAdapter}
    if name not in adapters:
        raise typer.BadParameter(f"{name!r} is not one of {', '.join(adapters)}", param_hint="--adapter")
    return adapters[name]()


@app.command("eval")
def eval_cmd(
    target: str = typer.Option("judge", "--target", help="judge | extractors"),
    data: list[str] = typer.Option(..., "--data", help="Labelled JSONL files or globs (repeatable)."),
    compiled: Path | None = typer.Option(
        None,
        "--compiled",
        help="A compiled .json or a `rbdspy compile` output directory (default: the hand-written prompts).",
    ),
    limit: int | None = typer.Option(None, "--limit", help="Records scored, sampled balanced by label (default: all)."),
    seed: int = typer.Option(0, "--seed"),
    threads: int = typer.Option(1, "--threads", help="Parallel program calls (1 for the embedded local LM)."),
    experiment: str = typer.Option("rbdspy", "--experiment", help="MLflow experiment."),
    lm: str | None = LmOpt,
    rubric_lm: str | None = typer.Option(None, "--rubric-lm", help="Extractors: also grade lessons with this LM."),
    adapter: str = AdapterOpt,
    design: str = DesignOpt,
    budget_tokens: int | None = BudgetTokensOpt,
):
    """Score a judge (accuracy, balanced accuracy, false-success rate, confusion-matrix PNG) or the
    extractors (lesson metric and its parts) on labelled data, as one MLflow run."""
    from rbdspy.lm import make_lm
    from rbdspy.optimizers import evaluate_program

    if target not in ("judge", "extractors"):
        raise typer.BadParameter(f"{target!r} is not judge or extractors", param_hint="--target")
    renderer = _judge_view([target], design, budget_tokens)
    import dspy

    dspy.configure(adapter=_adapter(adapter))
    try:
        report, run_id = evaluate_program(
            target,
            data,
            compiled=compiled,
            lm=make_lm(lm),
            limit=limit,
            seed=seed,
            num_threads=threads,
            rubric_lm=_lm_or_none(rubric_lm),
            experiment=experiment,
            design=design,
            renderer=renderer,
        )
    except (FileNotFoundError, ValueError) as error:
        raise typer.BadParameter(str(error), param_hint="--data/--compiled/--design") from error
    console.print(_report_table(f"{target} ({len(report.rows)} records, {compiled or 'uncompiled'})", report.metrics))
    if report.confusion:
        table = Table(title="environment label (rows) x verdict (columns)")
        for column in ("", "success", "failure", "indeterminate"):
            table.add_column(column)
        for gold, row in report.confusion.items():
            table.add_row(gold, *(str(row[p]) for p in ("success", "failure", "indeterminate")))
        console.print(table)
    console.print(f"MLflow run {run_id}")


@app.command("ui")
def ui_cmd(port: int = typer.Option(5000, "--port", help="Port on 127.0.0.1.")):
    """Start the MLflow UI on 127.0.0.1 on the project's tracking store ($MLFLOW_TRACKING_URI or
    sqlite:///mlflow.db here)."""
    from rbdspy import tracking

    console.print(f"MLflow UI for {tracking.tracking_uri()} at http://127.0.0.1:{port} (Ctrl-C to stop)")
    raise typer.Exit(tracking.ui(port=port))


def main() -> None:
    app()


if __name__ == "__main__":
    main()
