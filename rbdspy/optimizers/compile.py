"""The compile entry point: labelled trajectories in, a tuned judge or extractor out, one MLflow
run per compile.

    result = compile_program("judge", "gepa", train=["datasets/twx-train.jsonl"],
                             dev=["datasets/twx-dev.jsonl"], budget=48, out_dir="compiled/")
    # the settings as one object: compile_program("judge", "gepa", train, dev, CompileOptions(budget=48), ...)
    ReasoningBank(agent, store, compiled="compiled/")

A judge is compiled for one design and one renderer (`design=`, `renderer=`, as `judge_for` takes
them): the student is built with them and every train/dev trajectory is rendered as that judge
will see it, so few-shot demos are the same compressed trajectories. The JSON stores prompts
only; load it with the same design and renderer (`load_program(..., design=, renderer=)`,
`rbdspy eval --design --budget-tokens`, or `ReasoningBank(judge=judge_for(design, renderer=...),
compiled=...)`): a file of another design fails to load, naming the predictors it lacks.

Each compile: samples balanced train/dev subsets, scores the uncompiled program on dev, runs the
optimizer's recipe with its metric-call budget, scores the compiled program on the same dev
subset, saves it as DSPy JSON (`judge.json` / `extractors.json`) and logs params (optimizer,
budget and what it maps to, LMs, dataset hashes and sizes), metrics (dev scores before and
after, wall time, LM calls and tokens, metric calls) and artifacts (the JSON, the judge's
confusion matrices, per-example dev results) to one MLflow run. Where the program round-trips
through it, `mlflow.dspy.log_model` logs it as a model too.
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dspy

from rbdspy import tracking
from rbdspy.judge.judge import DEFAULT_JUDGE_DESIGN, judge_for
from rbdspy.lessons.extractor import Extractor
from rbdspy.lm.usage import LmUsage
from rbdspy.loop.compiled_prompts import COMPONENT_FILES, load_component
from rbdspy.optimizers.evaluation import EvalReport, evaluate
from rbdspy.optimizers.examples import balanced_sample, expand_paths, files_digest, load_labelled, make_examples
from rbdspy.optimizers.metrics import METRIC_THRESHOLDS, metric_for
from rbdspy.optimizers.options import CompileOptions
from rbdspy.optimizers.plots import confusion_png
from rbdspy.optimizers.recipes import RECIPES, check, defaults_for, plan
from rbdspy.optimizers.rubric import LessonRubric
from rbdspy.optimizers.usage import CountingMetric
from rbdspy.render import DEFAULT_BUDGET_TOKENS, as_renderer

log = logging.getLogger(__name__)

FILE_NAMES = {"judge": COMPONENT_FILES["judge"], "extractors": COMPONENT_FILES["extractor"]}


def new_program(
    target: str, *, design: str = DEFAULT_JUDGE_DESIGN, renderer: Any = DEFAULT_BUDGET_TOKENS
) -> dspy.Module:
    """The uncompiled program of a target: what `ReasoningBank` holds as `.judge` / `.extractor`.
    `design` is the judge's (`judge_for(design)`; the extractors have one design); `renderer`
    what either is shown of a trajectory (None: `Trajectory.render`; a token budget or an
    EvidenceRenderer)."""
    if target == "judge":
        return judge_for(design, renderer=renderer)
    if target == "extractors":
        if design != DEFAULT_JUDGE_DESIGN:
            raise ValueError(f"design applies to the judge only; the extractors have one design (got {design!r})")
        return Extractor(renderer=renderer)
    raise ValueError(f"target must be 'judge' or 'extractors'; got {target!r}")


def load_program(
    target: str, path: str | Path | None, *, design: str = DEFAULT_JUDGE_DESIGN, renderer: Any = DEFAULT_BUDGET_TOKENS
) -> dspy.Module:
    """A target's program, uncompiled (`path=None`) or loaded from a compiled JSON file or a
    compile output directory. The file holds prompts only: pass the design and renderer it was
    compiled with (a judge file of another design raises ValueError naming what it lacks)."""
    program = new_program(target, design=design, renderer=renderer)
    if path is None:
        return program
    path = Path(path)
    if path.is_dir():
        path = path / FILE_NAMES[target]
    if path.suffix != ".json" or not path.is_file():
        raise FileNotFoundError(
            f"no compiled {target} at {path} (give a .json written by `rbdspy compile`, or its output directory)"
        )
    try:
        load_component(program, path)
    except ValueError as error:
        if target != "judge" or "no saved state" not in str(error):
            raise
        # The predictors are named after the design (predict, checklist, confident).
        raise ValueError(f"{error} (was it compiled for another judge design than {design!r}?)") from error
    return program


def renderer_name(renderer: Any) -> str:
    """How a compile or eval logs its renderer: "legacy" for the rendering by characters
    (`Trajectory.render(max_chars)`), an EvidenceRenderer's `describe()` (e.g. evidence-1800), or a
    callable's type."""
    renderer = as_renderer(renderer)
    if renderer is None:
        return "legacy"
    describe = getattr(renderer, "describe", None)
    return describe() if callable(describe) else type(renderer).__name__


@dataclass
class CompileResult:
    target: str
    optimizer: str
    path: Path
    before: EvalReport
    after: EvalReport
    run_id: str | None
    knobs: dict[str, Any]
    usage: dict[str, float] = field(default_factory=dict)
    program: Any = None


@dataclass(frozen=True)
class CompileSettings:
    """A compile's budget (metric calls) and sizes, each the caller's or else the recipe default
    for the target (smaller when the target is compiled as part of `--target all`)."""

    budget: int
    train_limit: int
    dev_limit: int
    max_demos: int


def compile_settings(
    target: str,
    optimizer: str,
    *,
    in_all: bool = False,
    budget: int | None = None,
    train_limit: int | None = None,
    dev_limit: int | None = None,
    max_demos: int | None = None,
) -> CompileSettings:
    """The settings a compile runs with: what was given, the recipe's defaults for the rest.
    `compile_program` runs with these, and the CLI estimates the compile's time from them."""
    default_budget, defaults = defaults_for(target, optimizer, in_all)
    return CompileSettings(
        budget=default_budget if budget is None else budget,
        train_limit=defaults.train_limit if train_limit is None else train_limit,
        dev_limit=defaults.dev_limit if dev_limit is None else dev_limit,
        max_demos=defaults.max_demos if max_demos is None else max_demos,
    )


def _lm_and_rubric(target: str, lm: Any, rubric_lm: Any, command: str) -> tuple[Any, Any]:
    """The LM a compile or eval runs on (`lm`, else `dspy.settings.lm`) and the lesson rubric
    (only for the extractors, only with a rubric LM); ValueError naming the fix when no LM."""
    lm = lm or dspy.settings.lm
    if lm is None:
        raise ValueError(f"{command} needs an LM: pass lm=... or dspy.configure(lm=...)")
    if rubric_lm is None or target != "extractors":
        return lm, None
    return lm, LessonRubric(rubric_lm)


def _lm_name(lm: Any) -> str:
    return getattr(lm, "model", None) or type(lm).__name__ if lm is not None else ""


def _log_report(prefix: str, report: EvalReport, workdir: Path) -> None:
    import mlflow  # heavy: mlflow

    mlflow.log_metrics({f"{prefix}_{k}": v for k, v in report.metrics.items()})
    rows = workdir / f"{prefix}_results.jsonl"
    rows.write_text("".join(json.dumps(r, default=str) + "\n" for r in report.rows))
    mlflow.log_artifact(str(rows), artifact_path="eval")
    if report.confusion is not None:
        png = confusion_png(
            report.confusion,
            workdir / f"{prefix}_confusion.png",
            title=f"Judge vs environment ({prefix.replace('_', ' ')})",
        )
        mlflow.log_artifact(str(png), artifact_path="eval")


def _log_model(program: dspy.Module, target: str) -> bool:
    """Logs the program with the MLflow DSPy flavour when it round-trips (it pickles the program,
    so it is a convenience for MLflow users; the JSON artifact is the source of truth)."""
    import mlflow  # heavy: mlflow

    try:
        mlflow.dspy.log_model(
            program, name=f"{target}_model", use_dspy_model_save=True, pip_requirements=["rbdspy", "dspy>=3.4.1,<3.5"]
        )
        return True
    except Exception as error:  # noqa: BLE001 - a flavour problem must not lose the compile
        log.warning(
            "mlflow.dspy.log_model failed for the %s (%s); the JSON artifact is logged regardless", target, error
        )
        mlflow.set_tag("rbdspy.log_model_error", f"{type(error).__name__}: {error}"[:500])
        return False
    finally:
        # log_model makes the model "active", and MLflow would then attach every later metric of
        # this process (the next compile's, an eval's) to it.
        mlflow.clear_active_model()


def compile_program(
    target: str,
    optimizer: str,
    train: Sequence[str | Path],
    dev: Sequence[str | Path],
    options: CompileOptions | None = None,
    *,
    out_dir: str | Path,
    lm: Any = None,
    reflection_lm: Any = None,
    rubric_lm: Any = None,
    **overrides: Any,
) -> CompileResult:
    """Compiles one target (see the module docstring) and saves it in `out_dir`. The settings are
    a `CompileOptions` (see its fields), or its fields as keyword arguments, or both (the keywords
    replace the object's fields); a keyword that is not a field is a TypeError. `lm` defaults to
    `dspy.settings.lm`; `reflection_lm` (GEPA's reflection, MIPROv2's proposer) to `lm`;
    `rubric_lm`, when given, also grades the extractors' lessons."""
    o = CompileOptions.merged(options, overrides, "compile_program")
    check(target, optimizer)
    renderer = as_renderer(o.renderer)  # one renderer for the student and its examples
    student = new_program(target, design=o.design, renderer=renderer)  # a bad design fails here, before any work
    settings = compile_settings(
        target,
        optimizer,
        in_all=o.in_all,
        budget=o.budget,
        train_limit=o.train_limit,
        dev_limit=o.dev_limit,
        max_demos=o.max_demos,
    )
    budget, train_limit, dev_limit = settings.budget, settings.train_limit, settings.dev_limit
    max_demos = settings.max_demos
    lm, rubric = _lm_and_rubric(target, lm, rubric_lm, "compile")
    train_files, dev_files = expand_paths(train), expand_paths(dev)
    train_records = balanced_sample(load_labelled(train_files), train_limit, o.seed)
    dev_records = balanced_sample(load_labelled(dev_files), dev_limit, o.seed)
    trainset = make_examples(target, train_records, renderer=renderer, design=o.design)
    devset = make_examples(target, dev_records, renderer=renderer, design=o.design)
    if not trainset:
        raise ValueError(f"no training records in {', '.join(map(str, train_files))}")
    plan(optimizer, budget, len(trainset))  # a budget too small for the optimizer fails before any LM call

    metric = CountingMetric(metric_for(target, rubric=rubric))
    metric_feedback = CountingMetric(metric_for(target, feedback=True, rubric=rubric))
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    out_path = out_dir / FILE_NAMES[target]

    params = {
        "target": target,
        "optimizer": optimizer,
        "design": o.design if target == "judge" else "",
        "renderer": renderer_name(renderer),
        "budget_metric_calls": budget,
        "lm": _lm_name(lm),
        "reflection_lm": _lm_name(reflection_lm or lm),
        "rubric_lm": _lm_name(rubric_lm) if rubric else "",
        "train_files": ",".join(map(str, train_files)),
        "dev_files": ",".join(map(str, dev_files)),
        "train_sha256": files_digest(train_files),
        "dev_sha256": files_digest(dev_files),
        "n_train": len(trainset),
        "n_dev": len(devset),
        "train_limit": train_limit,
        "dev_limit": dev_limit,
        "max_demos": max_demos,
        "seed": o.seed,
        "num_threads": o.num_threads,
        **(o.extra_params or {}),
    }

    def score(program: dspy.Module) -> EvalReport | None:
        """The program's dev scores (None without dev records)."""
        if not devset:
            return None
        return evaluate(
            program, devset, target, num_threads=o.num_threads, display_progress=o.display_progress, rubric=rubric
        )

    started = time.perf_counter()
    # The run first: it switches DSPy autologging on, and dspy.context copies the callbacks as
    # they are when it is entered, so the other order records no trace of this compile.
    with (
        tracking.run(
            f"compile-{target}-{optimizer}",
            experiment=o.experiment,
            tags={"rbdspy.kind": "compile", "rbdspy.target": target},
        ) as active,
        dspy.context(lm=lm),
        tempfile.TemporaryDirectory() as tmp,
    ):
        import mlflow  # heavy: mlflow

        workdir = Path(tmp)
        tracking.log_params(params)
        with LmUsage() as usage:
            before = score(student)
            compile_started = time.perf_counter()
            compiled, knobs = RECIPES[optimizer](
                student,
                trainset,
                metric=metric,
                metric_feedback=metric_feedback,
                metric_threshold=METRIC_THRESHOLDS[target],
                budget=budget,
                reflection_lm=reflection_lm,
                max_demos=max_demos,
                labeled_demos=max_demos if target == "judge" else 0,
                seed=o.seed,
                num_threads=o.num_threads,
            )
            compile_seconds = time.perf_counter() - compile_started
            after = score(compiled)
        tracking.log_params({f"recipe_{k}": v for k, v in knobs.items()})
        compiled.save(str(out_path))
        mlflow.log_artifact(str(out_path), artifact_path="compiled")
        totals = usage.totals()
        metrics = {
            **totals,
            "metric_calls": float(metric.calls + metric_feedback.calls),
            "feedback_calls": float(metric_feedback.feedback_calls),
            "compile_seconds": compile_seconds,
            "wall_seconds": time.perf_counter() - started,
        }
        if before is not None:
            _log_report("dev_before", before, workdir)
            _log_report("dev_after", after, workdir)
            metrics["dev_gain"] = after.score - before.score
        mlflow.log_metrics(metrics)
        if o.log_model:
            _log_model(compiled, target)
        run_id = active.info.run_id
    log.info(
        "compiled %s with %s: dev %.3f -> %.3f, saved to %s",
        target,
        optimizer,
        before.score if before else float("nan"),
        after.score if after else float("nan"),
        out_path,
    )
    return CompileResult(target, optimizer, out_path, before, after, run_id, knobs, metrics, compiled)


def evaluate_program(
    target: str,
    data: Sequence[str | Path],
    *,
    compiled: str | Path | None = None,
    lm: Any = None,
    limit: int | None = None,
    seed: int = 0,
    num_threads: int = 1,
    rubric_lm: Any = None,
    experiment: str = tracking.DEFAULT_EXPERIMENT,
    display_progress: bool = True,
    design: str = DEFAULT_JUDGE_DESIGN,
    renderer: Any = DEFAULT_BUDGET_TOKENS,
) -> tuple[EvalReport, str]:
    """Scores a compiled (or, with `compiled=None`, the hand-written) judge or extractor on
    labelled data, as one MLflow run with the metrics, per-example results and, for the judge,
    the confusion-matrix PNG. Returns the report and the run id. `design` and `renderer` as the
    compile took them: the program is built with them and the data rendered with `renderer`."""
    lm, rubric = _lm_and_rubric(target, lm, rubric_lm, "eval")
    renderer = as_renderer(renderer)
    files = expand_paths(data)
    examples = make_examples(
        target, balanced_sample(load_labelled(files), limit, seed), renderer=renderer, design=design
    )
    program = load_program(target, compiled, design=design, renderer=renderer)
    with (  # the run first, as in compile_program: autologging must be on before dspy.context
        tracking.run(
            f"eval-{target}", experiment=experiment, tags={"rbdspy.kind": "eval", "rbdspy.target": target}
        ) as active,
        dspy.context(lm=lm),
        tempfile.TemporaryDirectory() as tmp,
    ):
        tracking.log_params(
            {
                "target": target,
                "compiled": str(compiled or "none"),
                "design": design if target == "judge" else "",
                "renderer": renderer_name(renderer),
                "lm": _lm_name(lm),
                "data_files": ",".join(map(str, files)),
                "data_sha256": files_digest(files),
                "n": len(examples),
                "limit": limit,
                "seed": seed,
            }
        )
        started = time.perf_counter()
        with LmUsage() as usage:
            report = evaluate(
                program, examples, target, num_threads=num_threads, display_progress=display_progress, rubric=rubric
            )
        import mlflow  # heavy: mlflow

        _log_report("eval", report, Path(tmp))
        mlflow.log_metrics({**usage.totals(), "wall_seconds": time.perf_counter() - started})
        return report, active.info.run_id
