"""Calibrating the probability judge's band on a few labelled trajectories of one environment.

The probability judge ranks trajectories well in every environment family measured, but the
height its P(success) sits at differs between families: a threshold chosen on one is too low or
too high on another (docs/concepts/judge.md). So the band is placed where the judge will work,
from N trajectories of that environment whose outcome is known (the environment's score, or a
person's label): `choose_band(scores, labels)` here, `Judge.calibrate(examples)` to judge them
first (each once; choosing the band costs no LM call).

How the band is chosen. A candidate threshold `t` calls a trajectory a success at or above `t`
and a failure below. Its balanced accuracy is the mean of the recall on successes and on
failures; its false-success rate the share of failures called successes, which is capped
(default 10%: a false success poisons memory, a false failure only forgoes a lesson). On N
examples a threshold that keeps the cap on these examples often breaks it on the next ones (the
examples' worst failure is rarely the environment's), so the cap is checked on `bootstrap`
resamples of the examples (successes and failures resampled separately, so each keeps the
sample's balance): a threshold is allowed when it keeps false successes within the cap on at
least `confidence` of them (default 0.8, chosen on train records: a band placed on a few
examples keeps the cap on new ones only by sitting higher, and a lower confidence lets it sit
where the examples' failures happen to fall, letting new ones through). Of the allowed
thresholds, the one with the best balanced accuracy on the examples wins (ties: fewer false
successes, then the middle of the tied ones).
Its balanced accuracy on the resamples gives the reported 95% interval.

An abstention band (`low < high`) is never chosen: balanced accuracy counts an abstention as
wrong, so widening the band below a threshold only loses failures called correctly, and the
false-success cap depends on the upper bound alone. The band is still (low, high), the shape the
judge takes, with low == high.

Measured: docs/bench/judge-calibration-local/sweep.md
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from dspy.predict.parameter import Parameter
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from rbdspy.judge.trajectory_text import as_judged
from rbdspy.types import Trajectory

DEFAULT_MAX_FALSE_SUCCESS = 0.10
DEFAULT_BOOTSTRAP = 1000
DEFAULT_CONFIDENCE = 0.8


class CalibrationWarning(UserWarning):
    """A band calibrated for one LM (or one set of judge questions) is used with another."""


class Calibration(BaseModel):
    """A band chosen on labelled trajectories, with what it was chosen for and how well it did.
    Saved with the program that holds the judge (`bank.save`, `judge.json`, MLflow)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    band: tuple[float, float] = Field(description="(failure below, success at or above) on P(success)")
    lm: str = Field(default="", description="the model the judge was calibrated with ('' unknown)")
    views: tuple[str, ...] = Field(default=(), description="the judge's questions the scores came from")
    n_success: int = Field(ge=1)
    n_failure: int = Field(ge=1)
    n_unscored: int = Field(default=0, ge=0, description="examples the judge gave no probability for")
    balanced_accuracy: float = Field(ge=0, le=1, description="at the band, on the examples")
    false_success_rate: float = Field(ge=0, le=1, description="at the band, on the examples")
    interval: tuple[float, float] = Field(description="95% bootstrap interval of the balanced accuracy")
    max_false_success: float = Field(ge=0, le=1)
    bootstrap: int = Field(ge=0)
    confidence: float = Field(default=DEFAULT_CONFIDENCE, gt=0, le=1)
    seed: int = 0

    @field_validator("band")
    @classmethod
    def _ordered(cls, band: tuple[float, float]) -> tuple[float, float]:
        return check_band(band)

    @property
    def n(self) -> int:
        return self.n_success + self.n_failure

    def summary(self) -> str:
        low, high = self.band
        band = f"threshold {high:.3f}" if low == high else f"band [{low:.3f}, {high:.3f})"
        lo, hi = self.interval
        unscored = f"; {self.n_unscored} gave no probability and were left out" if self.n_unscored else ""
        return (
            f"{band}: balanced accuracy {self.balanced_accuracy:.1%} (95% interval {lo:.1%} to {hi:.1%}), "
            f"false successes {self.false_success_rate:.1%} (cap {self.max_false_success:.0%}), "
            f"on {self.n} examples ({self.n_success} success, {self.n_failure} failure){unscored}; "
            f"calibrated for {self.lm or 'an unnamed LM'}"
        )


class JudgeBand(Parameter):
    """The probability judge's band and the calibration that chose it, as a DSPy parameter: a
    program that holds the judge (a ReasoningBank, MaTTS, a user's program embedding either)
    saves it with its prompts and loads it back, in JSON, with no code of its own.
    `lm_checked` says whether the LM in use has been compared with the one calibrated for."""

    def __init__(self, band: tuple[float, float], calibration: Calibration | None = None):
        self.band = check_band(band)
        self.calibration = calibration
        self.lm_checked = False

    def dump_state(self, json_mode: bool = True) -> dict[str, Any]:
        calibration = self.calibration.model_dump(mode="json") if self.calibration is not None else None
        return {"band": list(self.band), "calibration": calibration}

    def load_state(self, state: dict[str, Any]) -> JudgeBand:
        if not isinstance(state, dict) or "band" not in state:
            raise ValueError(f"a saved judge band is an object with 'band' (and 'calibration'); got {state!r:.200}")
        try:
            calibration = Calibration.model_validate(state["calibration"]) if state.get("calibration") else None
        except ValidationError as error:
            raise ValueError(f"the saved calibration is not one rbdspy reads: {error}") from error
        self.band = check_band(state["band"]) if calibration is None else calibration.band
        self.calibration, self.lm_checked = calibration, False
        return self

    def reset(self) -> None:
        """Optimizers reset a copy's demos before compiling it; the band stays as it was placed."""


def check_band(band: Any) -> tuple[float, float]:
    """(low, high) with 0 <= low <= high <= 1, or a ValueError naming what was given."""
    try:
        low, high = (float(bound) for bound in band)
    except (TypeError, ValueError):
        raise ValueError(f"band must be (low, high) with 0 <= low <= high <= 1; got {band!r}") from None
    if not 0.0 <= low <= high <= 1.0:
        raise ValueError(f"band must be (low, high) with 0 <= low <= high <= 1; got {band!r}")
    return low, high


def _cuts(scores: np.ndarray) -> np.ndarray:
    """Candidate thresholds: below every score, between each two neighbouring distinct scores
    (the middle of the gap: any threshold there splits the examples alike), and above every
    score (everything a failure). All within [0, 1]."""
    distinct = np.unique(scores)
    inner = (distinct[:-1] + distinct[1:]) / 2
    return np.concatenate([[distinct[0] / 2], inner, [(distinct[-1] + 1) / 2]])


def _rates(scores, success, cuts, weights=None):
    """(balanced accuracy, false-success rate) at each cut (rows: weight vectors, one per resample)."""
    weights = np.ones((1, len(scores))) if weights is None else weights
    called = scores[None, :] >= cuts[:, None]  # cut x example: called a success
    s_w, f_w = weights * success, weights * ~success
    tp = s_w @ called.T  # resample x cut
    fp = f_w @ called.T
    n_s, n_f = s_w.sum(axis=1, keepdims=True), f_w.sum(axis=1, keepdims=True)
    recall_s, fs = tp / n_s, fp / n_f
    return (recall_s + 1 - fs) / 2, fs


def _best_cut(ba: np.ndarray, fs: np.ndarray, allowed: np.ndarray, cuts: np.ndarray) -> float:
    """The allowed cut with the best balanced accuracy (ties: fewer false successes, then the
    middle of the tied cuts). The cut above every score is allowed (no false success) unless a
    failure scored exactly 1, which no cut within [0, 1] can be above: then the highest cut."""
    if not allowed.any():  # a failure scored exactly 1: no threshold within [0, 1] is above it
        return float(cuts[-1])
    key = np.where(allowed, ba, -np.inf)
    tied = np.flatnonzero(np.isclose(key, key.max()))
    tied = tied[np.isclose(fs[tied], fs[tied].min())]
    return float(cuts[tied[len(tied) // 2]])


def choose_band(
    scores: Sequence[float],
    labels: Sequence[bool | str],
    *,
    max_false_success: float = DEFAULT_MAX_FALSE_SUCCESS,
    bootstrap: int = DEFAULT_BOOTSTRAP,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = 0,
    lm: str = "",
    views: Sequence[str] = (),
    n_unscored: int = 0,
) -> Calibration:
    """The band for P(success) `scores` of trajectories whose outcomes are `labels` (True or
    "success" for a success); see the module docstring. `bootstrap=0` checks the cap on the
    examples as they are (no resampling; the interval is the point itself)."""
    if len(scores) != len(labels):
        raise ValueError(f"{len(scores)} scores but {len(labels)} labels")
    if not 0.0 <= max_false_success <= 1.0:
        raise ValueError(f"max_false_success must be within [0, 1]; got {max_false_success!r}")
    if bootstrap < 0:
        raise ValueError(f"bootstrap must be 0 or more resamples; got {bootstrap!r}")
    if not 0.0 < confidence <= 1.0:
        raise ValueError(f"confidence must be within (0, 1]; got {confidence!r}")
    success = np.array([_as_success(label, i) for i, label in enumerate(labels)], dtype=bool)
    values = np.array([float(s) for s in scores], dtype=float)
    if values.size and (not np.all(np.isfinite(values)) or values.min() < 0 or values.max() > 1):
        raise ValueError("scores must be probabilities within [0, 1]")
    n_success, n_failure = int(success.sum()), int((~success).sum())
    if not n_success or not n_failure:
        raise ValueError(
            f"calibration needs at least one success and one failure; got {n_success} success and "
            f"{n_failure} failure: label trajectories of both kinds"
        )
    cuts = _cuts(values)
    ba, fs = (rates[0] for rates in _rates(values, success, cuts))
    if bootstrap:
        weights = _stratified_weights(success, bootstrap, seed)
        _, fs_resampled = _rates(values, success, cuts, weights)
        allowed = (fs_resampled <= max_false_success + 1e-12).mean(axis=0) >= confidence
    else:
        allowed = fs <= max_false_success + 1e-12
    threshold = _best_cut(ba, fs, allowed, cuts)
    point_ba, point_fs = (float(x[0, 0]) for x in _rates(values, success, np.array([threshold])))
    interval = (point_ba, point_ba)
    if bootstrap:
        at_band, _ = _rates(values, success, np.array([threshold]), weights)
        interval = tuple(float(x) for x in np.percentile(at_band[:, 0], [2.5, 97.5]))
    return Calibration(
        band=(threshold, threshold),
        lm=lm,
        views=tuple(views),
        n_success=n_success,
        n_failure=n_failure,
        n_unscored=n_unscored,
        balanced_accuracy=point_ba,
        false_success_rate=point_fs,
        interval=interval,
        max_false_success=max_false_success,
        bootstrap=bootstrap,
        confidence=confidence,
        seed=seed,
    )


def _stratified_weights(success: np.ndarray, bootstrap: int, seed: int) -> np.ndarray:
    """How often each example is drawn in each resample (resample x example), successes and
    failures drawn separately with their own counts."""
    rng = np.random.default_rng(seed)
    weights = np.zeros((bootstrap, len(success)))
    for group in (np.flatnonzero(success), np.flatnonzero(~success)):
        weights[:, group] = rng.multinomial(len(group), np.full(len(group), 1 / len(group)), size=bootstrap)
    return weights


def _as_success(label: Any, index: int) -> bool:
    if isinstance(label, (bool, np.bool_)):
        return bool(label)
    text = str(label).strip().lower()
    if text in ("success", "failure"):
        return text == "success"
    raise ValueError(f"label {index} is {label!r}: give True/False or 'success'/'failure'")


def lm_name(lm: Any) -> str:
    """The model string of a dspy.LM (what a calibration records and compares), '' for none."""
    return str(getattr(lm, "model", "") or "") if lm is not None else ""


def warn_if_other_lm(calibration: Calibration | None, lm: Any, where: str) -> bool:
    """Warns (CalibrationWarning) when `calibration` was made for another model than `lm`;
    returns whether it warned. No warning without a calibration, without an LM, or when the
    calibration names none."""
    current = lm_name(lm)
    if calibration is None or not current or not calibration.lm or current == calibration.lm:
        return False
    warnings.warn(
        f"{where}: the judge's band was calibrated for {calibration.lm}, but the LM in use is {current}; "
        "its probabilities may sit at another height: calibrate again on labelled trajectories "
        "(Judge.calibrate or `rbdspy calibrate --judge`)",
        CalibrationWarning,
        stacklevel=3,
    )
    return True


def labelled_trajectory(example: Any, index: int) -> tuple[Trajectory, bool]:
    """(the trajectory the judge is shown, whether it was a success) from one calibration
    example: a labelled record (`trajectory` and `label` "success"/"failure", as attributes or
    keys: a dataset record, a dspy.Example, a dict), whose final answer is hidden as `rbdspy
    eval` hides it (dataset files put the environment's score there) unless the agent wrote it
    (`as_judged`); or a Trajectory whose `outcome` is set, judged as the bank judges it.
    Anything else is a ValueError naming the example and what it lacks."""
    if isinstance(example, Trajectory):
        if example.outcome is None:
            raise ValueError(f"example {index}: a Trajectory needs its outcome (True/False) to calibrate on")
        if not example.task:
            raise ValueError(f"example {index}: the Trajectory has no task")
        return example, example.outcome
    get = example.get if isinstance(example, dict) else (lambda key: getattr(example, key, None))
    trajectory, label = get("trajectory"), get("label")
    if label is None and isinstance(get("verdict"), str):  # a dspy.Example made for the judge
        label = get("verdict")
    if trajectory is None or label is None:
        raise ValueError(
            f"example {index} ({type(example).__name__}): give a labelled record (trajectory and label "
            "'success'/'failure') or a Trajectory whose outcome is set"
        )
    try:
        trajectory = Trajectory.coerce(trajectory, task=get("task"))
    except (TypeError, ValueError) as error:
        raise ValueError(f"example {index}: its trajectory is not one rbdspy reads ({error})") from error
    if not trajectory.task:
        raise ValueError(f"example {index}: the trajectory has no task (set task on the record or the trajectory)")
    return as_judged(trajectory), _as_success(label, index)
