"""`rbdspy calibrate --judge`: the judge's band placed on labelled trajectories of one environment,
saved where the bank will load it, and logged to MLflow.

    calibration, saved, run_id = calibrate_judge(["my-env-labelled.jsonl"], path="compiled/")
    ReasoningBank(agent, store, compiled="compiled/")   # judges with the calibrated band

The judge is the one the bank will run: the prompts found at `path` (a compile output directory's
judge.json, a judge's or a whole bank's saved .json), else the hand-written prompts. It
judges each record once (rbdspy/judge/calibration.py chooses the band with no LM call of its
own); the band, with the LM it was calibrated for, is written back to `path`:

- a directory (new or a compile's output): its judge.json, the prompts it held plus the band;
- a .json a Judge saved (or a new file): the same, in that file;
- a .json a ReasoningBank saved (keys `judge.*`): only its `judge.band_state` entry changes.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dspy

from rbdspy import tracking
from rbdspy.judge.base import BaseJudge
from rbdspy.judge.calibration import (
    DEFAULT_BOOTSTRAP,
    DEFAULT_CONFIDENCE,
    DEFAULT_MAX_FALSE_SUCCESS,
    Calibration,
)
from rbdspy.judge.judge import DEFAULT_JUDGE_DESIGN, judge_for
from rbdspy.judge.probability_judge import ProbabilityJudge
from rbdspy.loop.compiled_prompts import COMPONENT_FILES, load_component, read_prompt_state
from rbdspy.optimizers.examples import balanced_sample, expand_paths, files_digest, load_labelled
from rbdspy.render import DEFAULT_BUDGET_TOKENS

BANK_PREFIX = "judge."  # how a ReasoningBank's saved state names its judge's entries
BAND_KEY = "band_state"


def _bank_file(path: Path) -> bool:
    """Whether `path` is a .json a ReasoningBank saved (its judge's entries under `judge.`)."""
    if path.suffix != ".json" or not path.is_file():
        return False
    return any(key.startswith(BANK_PREFIX) for key in read_prompt_state(path))


def judge_file(path: Path | None) -> Path | None:
    """The judge JSON a calibration reads its prompts from and writes its band to (None: a
    ReasoningBank's .json, handled as a whole, or no path)."""
    if path is None:
        return None
    if path.suffix == ".json":
        return None if _bank_file(path) else path
    return path / COMPONENT_FILES["judge"]


def load_judge(
    path: Path | None, *, design: str = DEFAULT_JUDGE_DESIGN, renderer: Any = DEFAULT_BUDGET_TOKENS
) -> BaseJudge:
    """The judge to calibrate: the prompts at `path` (see the module docstring) where it holds
    them, else the hand-written ones."""
    judge = judge_for(design, renderer=renderer)
    if path is not None and _bank_file(path):
        state = read_prompt_state(path)
        try:
            judge.load_state({k[len(BANK_PREFIX) :]: v for k, v in state.items() if k.startswith(BANK_PREFIX)})
        except KeyError as error:
            raise ValueError(
                f"{path}: its judge has no saved state for {error} (saved with another --design?)"
            ) from None
        return judge
    own = judge_file(path)
    if own is not None and own.is_file():
        load_component(judge, own)
    return judge


def save_band(judge: ProbabilityJudge, path: Path) -> Path:
    """Writes the judge (prompts and band) where `path` says; returns the file written."""
    if _bank_file(path):
        state = json.loads(path.read_text(encoding="utf-8"))
        state[BANK_PREFIX + BAND_KEY] = judge.band_state.dump_state()
        path.write_text(json.dumps(state, indent=2) + "\n", encoding="utf-8")
        return path
    target = judge_file(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    judge.save(str(target))
    return target


def calibrate_judge(
    data: Sequence[str | Path],
    *,
    path: str | Path | None = None,
    lm: Any = None,
    limit: int | None = None,
    seed: int = 0,
    max_false_success: float = DEFAULT_MAX_FALSE_SUCCESS,
    bootstrap: int = DEFAULT_BOOTSTRAP,
    confidence: float = DEFAULT_CONFIDENCE,
    design: str = DEFAULT_JUDGE_DESIGN,
    renderer: Any = DEFAULT_BUDGET_TOKENS,
    experiment: str = tracking.DEFAULT_EXPERIMENT,
) -> tuple[Calibration, Path | None, str]:
    """Calibrates the judge on the labelled records of `data` (JSONL files or globs; at most
    `limit`, balanced by label), saves it to `path` (None: nowhere), logs one MLflow run.
    Returns (the Calibration, the file written or None, the MLflow run id)."""
    files = expand_paths(data)
    records = balanced_sample(load_labelled(files), limit, seed)
    where = Path(path) if path is not None else None
    judge = load_judge(where, design=design, renderer=renderer)
    if not isinstance(judge, ProbabilityJudge):
        raise ValueError(
            f"the {design} judge writes its verdict and has no probability to calibrate; "
            f"calibrate the {ProbabilityJudge.design} judge (the default)"
        )
    lm = lm if lm is not None else dspy.settings.lm
    with (
        tracking.run("calibrate-judge", experiment=experiment, tags={"rbdspy.kind": "calibrate"}) as active,
        dspy.context(lm=lm),
        tempfile.TemporaryDirectory() as tmp,
    ):
        tracking.log_params(
            {
                "data_files": ",".join(map(str, files)),
                "data_sha256": files_digest(files),
                "n": len(records),
                "limit": limit,
                "seed": seed,
                "max_false_success": max_false_success,
                "bootstrap": bootstrap,
                "confidence": confidence,
                "path": str(where or ""),
            }
        )
        calibration = judge.calibrate(
            records, max_false_success=max_false_success, bootstrap=bootstrap, confidence=confidence, seed=seed
        )
        saved = save_band(judge, where) if where is not None else None
        import mlflow  # heavy: mlflow

        mlflow.log_params({"lm": calibration.lm, "band_low": calibration.band[0], "band_high": calibration.band[1]})
        mlflow.log_metrics(
            {
                "balanced_accuracy": calibration.balanced_accuracy,
                "balanced_accuracy_low": calibration.interval[0],
                "balanced_accuracy_high": calibration.interval[1],
                "false_success_rate": calibration.false_success_rate,
                "n_unscored": calibration.n_unscored,
            }
        )
        artifact = Path(tmp) / "calibration.json"
        artifact.write_text(calibration.model_dump_json(indent=2), encoding="utf-8")
        mlflow.log_artifact(str(artifact), artifact_path="calibration")
        return calibration, saved, active.info.run_id
