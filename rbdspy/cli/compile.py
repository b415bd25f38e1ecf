"""`rbdspy compile` and `rbdspy eval`: tuned judge and extractor prompts from labelled
trajectories, scored before and after, tracked in MLflow."""

from __future__ import annotations

from pathlib import Path

import dspy
import typer
from rich.table import Table

from rbdspy.cli.common import LmOpt, get_console
from rbdspy.cli.preflight import lm_for
from rbdspy.judge.judge import DEFAULT_JUDGE_DESIGN, JUDGE_DESIGNS
from rbdspy.render import MIN_BUDGET_TOKENS

AdapterOpt = typer.Option(
    "json",
    "--adapter",
    help="json (JSONAdapter: constrained decoding on the local LM, as demo and bench run the bank) "
    "| chat (ChatAdapter).",
)
CompileTargetOpt = typer.Option("judge", "--target", help="judge | extractors | all")
TrainOpt = typer.Option(..., "--train", help="Training JSONL files or globs (repeatable, or comma-separated).")
DevOpt = typer.Option(..., "--dev", help="Dev JSONL files or globs, scored before and after compiling (repeatable).")
DesignOpt = typer.Option(
    "probability", "--design", help="Judge design: probability | rationale | checklist | self-consistency | confidence."
)
BudgetTokensOpt = typer.Option(
    1800,
    "--budget-tokens",
    help=f"Show trajectories through the evidence renderer within this many tokens (at least {MIN_BUDGET_TOKENS}), "
    "or 0 to cut them by characters (Trajectory.render). Compile and eval a judge with the same value.",
)


def _judge_view(targets: list[str], design: str, budget_tokens: int | None) -> int | None:
    """Checks --design and --budget-tokens (a usage error naming the option) and returns the
    renderer argument the programs take: the token budget, or None (0) for the character-cut rendering."""
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


def _lm_or_none(spec: str | None, option: str):
    if spec is None:
        return None
    return lm_for(spec, option)


def _report_table(title: str, metrics: dict[str, float]) -> Table:
    table = Table(title=title, show_header=False)
    for key, value in metrics.items():
        table.add_row(key, f"{value:.3f}")
    return table


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
        help="Metric calls the optimizer may spend, per target (default: sized per target and optimizer for the "
        "embedded local LM, printed before compiling; docs/guides/compile.md).",
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
    # The compile machinery (~16 ms of imports) is loaded only when compile or eval runs, not for `rbdspy --help`.
    from rbdspy.optimizers import CompileOptions, compile_program, compile_settings  # heavy: rbdspy.optimizers
    from rbdspy.optimizers.recipes import check, estimate_seconds  # heavy: rbdspy.optimizers

    console = get_console()
    targets = ["judge", "extractors"] if target == "all" else [target]
    try:
        for name in targets:
            check(name, optimizer)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--target/--optimizer") from error
    renderer = _judge_view(targets, design, budget_tokens)
    task_lm = lm_for(lm)
    reflection = _lm_or_none(reflection_lm, "--reflection-lm")
    rubric = _lm_or_none(rubric_lm, "--rubric-lm")
    dspy.configure(lm=task_lm, adapter=_adapter(adapter))
    options = CompileOptions(
        budget=budget,
        train_limit=train_limit,
        dev_limit=dev_limit,
        max_demos=max_demos,
        seed=seed,
        num_threads=threads,
        in_all=len(targets) > 1,
        experiment=experiment,
        log_model=log_model,
        extra_params={"adapter": adapter},
        renderer=renderer,
    )
    for name in targets:
        settings = compile_settings(name, optimizer, in_all=options.in_all, budget=budget, dev_limit=dev_limit)
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
                # The extractors have one design: the default's name.
                options.replace(design=design if name == "judge" else DEFAULT_JUDGE_DESIGN),
                out_dir=out,
                lm=task_lm,
                reflection_lm=reflection,
                rubric_lm=rubric,
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
    adapters = {"json": dspy.JSONAdapter, "chat": dspy.ChatAdapter}
    if name not in adapters:
        raise typer.BadParameter(f"{name!r} is not one of {', '.join(adapters)}", param_hint="--adapter")
    return adapters[name]()


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
    from rbdspy.optimizers import evaluate_program  # heavy: rbdspy.optimizers (see compile_cmd)

    console = get_console()
    if target not in ("judge", "extractors"):
        raise typer.BadParameter(f"{target!r} is not judge or extractors", param_hint="--target")
    renderer = _judge_view([target], design, budget_tokens)
    task_lm, rubric = lm_for(lm), _lm_or_none(rubric_lm, "--rubric-lm")
    dspy.configure(adapter=_adapter(adapter))
    try:
        report, run_id = evaluate_program(
            target,
            data,
            compiled=compiled,
            lm=task_lm,
            limit=limit,
            seed=seed,
            num_threads=threads,
            rubric_lm=rubric,
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
