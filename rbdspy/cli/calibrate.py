"""`rbdspy calibrate --judge`: place the judge's band on labelled trajectories of your environment."""

from __future__ import annotations

from pathlib import Path

import dspy
import typer

from rbdspy.cli.common import LmOpt, get_console
from rbdspy.cli.compile import AdapterOpt, BudgetTokensOpt, DesignOpt, _adapter, _judge_view
from rbdspy.cli.preflight import lm_for
from rbdspy.judge.calibration import DEFAULT_BOOTSTRAP, DEFAULT_CONFIDENCE, DEFAULT_MAX_FALSE_SUCCESS


def calibrate_cmd(
    judge: bool = typer.Option(False, "--judge", help="Calibrate the judge's band (the one component with a band)."),
    data: list[str] = typer.Option(
        ..., "--from", help="Labelled trajectories of the environment to judge: JSONL files or globs (repeatable)."
    ),
    path: Path | None = typer.Option(
        None,
        "--path",
        help="Where the judge is read from and its band saved: a directory (its judge.json; `ReasoningBank(..., "
        "compiled=DIR)` loads it), a judge's .json, or a ReasoningBank's saved .json. Default: print, save nothing.",
    ),
    limit: int | None = typer.Option(None, "--limit", help="Records judged, sampled balanced by label (default: all)."),
    max_false_success: float = typer.Option(
        DEFAULT_MAX_FALSE_SUCCESS,
        "--max-false-success",
        help="The largest share of failures the band may call successes.",
    ),
    bootstrap: int = typer.Option(DEFAULT_BOOTSTRAP, "--bootstrap", help="Resamples the cap is checked on (0: none)."),
    confidence: float = typer.Option(
        DEFAULT_CONFIDENCE, "--confidence", help="Share of the resamples on which the band must keep the cap."
    ),
    seed: int = typer.Option(0, "--seed"),
    experiment: str = typer.Option("rbdspy", "--experiment", help="MLflow experiment."),
    lm: str | None = LmOpt,
    adapter: str = AdapterOpt,
    design: str = DesignOpt,
    budget_tokens: int | None = BudgetTokensOpt,
):
    """Judge each labelled trajectory once and choose the band (failure below, success at or above
    P(success)) with the best balanced accuracy whose false successes stay within the cap; print
    it with its 95% interval, save it with the judge (--path) and log the run to MLflow."""
    from rbdspy.optimizers.calibrate import calibrate_judge  # heavy: rbdspy.optimizers

    console = get_console()
    if not judge:
        raise typer.BadParameter("say what to calibrate: --judge (the judge's band)", param_hint="--judge")
    renderer = _judge_view(["judge"], design, budget_tokens)
    task_lm = lm_for(lm)
    dspy.configure(adapter=_adapter(adapter))
    try:
        calibration, saved, run_id = calibrate_judge(
            data,
            path=path,
            lm=task_lm,
            limit=limit,
            seed=seed,
            max_false_success=max_false_success,
            bootstrap=bootstrap,
            confidence=confidence,
            design=design,
            renderer=renderer,
            experiment=experiment,
        )
    except (FileNotFoundError, ValueError) as error:
        raise typer.BadParameter(str(error), param_hint="--from/--path/--design") from error
    console.print(f"[bold]judge[/bold] {calibration.summary()}")
    low, high = calibration.band
    if saved is not None:
        console.print(f"saved {saved} (MLflow run {run_id})")
    else:
        console.print(f"not saved (no --path); use it as Judge(band=({low:.3f}, {high:.3f})). MLflow run {run_id}")
