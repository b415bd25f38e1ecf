"""`CompileOptions`: the settings of one compile, as `compile_program` takes them.

    options = CompileOptions(budget=48, dev_limit=8, log_model=False)
    compile_program("judge", "gepa", train, dev, options, out_dir="compiled/")   # or as keywords:
    compile_program("judge", "gepa", train, dev, out_dir="compiled/", budget=48, dev_limit=8, log_model=False)

The LMs and the output directory are not settings but what the compile runs on and writes to:
they stay `compile_program`'s own keyword arguments.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rbdspy.judge.judge import DEFAULT_JUDGE_DESIGN
from rbdspy.options import Options
from rbdspy.render import DEFAULT_BUDGET_TOKENS
from rbdspy.tracking import DEFAULT_EXPERIMENT


@dataclass(frozen=True)
class CompileOptions(Options):
    """How a target is compiled and scored (`rbdspy compile`'s options). The budget, the limits and
    `max_demos` default to the recipe's defaults for the target (`compile_settings`). Frozen:
    `options.replace(design="checklist")` is a copy with a field changed."""

    budget: int | None = None
    """Metric calls the optimizer may spend (default: the recipe's, sized for the local LM)."""
    train_limit: int | None = None
    """Train records used, sampled balanced by label."""
    dev_limit: int | None = None
    """Dev records scored before and after compiling, sampled balanced by label."""
    max_demos: int | None = None
    """Few-shot demos per predictor (bootstrap, labeled)."""
    seed: int = 0
    """Seeds the balanced samples and the optimizer."""
    num_threads: int = 1
    """Parallel program calls (1 for the embedded local LM)."""
    in_all: bool = False
    """The target is compiled as part of `--target all` (smaller recipe defaults)."""
    experiment: str = DEFAULT_EXPERIMENT
    """The MLflow experiment."""
    log_model: bool = True
    """Also log the program with `mlflow.dspy.log_model` (where it round-trips)."""
    display_progress: bool = True
    """Show the dev scoring's progress bars."""
    extra_params: dict[str, Any] | None = None
    """More MLflow params to log with the run (the CLI logs its adapter)."""
    design: str = DEFAULT_JUDGE_DESIGN
    """The judge's design, by name (`judge_for(design)`; the extractors have one design, the default's name)."""
    renderer: Any = DEFAULT_BUDGET_TOKENS
    """What the program is shown of a trajectory, and how the examples it is compiled and scored on
    are rendered: a token budget, an EvidenceRenderer, or None (`Trajectory.render`)."""
