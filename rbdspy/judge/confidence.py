"""The confidence judge: rationale, verdict and a stated confidence in [0, 1], in one call; below
`threshold` the verdict is `indeterminate`, so nothing is written."""

from __future__ import annotations

import math
from typing import Any

import dspy

from rbdspy.core.lm_errors import attempt
from rbdspy.core.plan import Plan
from rbdspy.judge.base import DEFAULT_MAX_CHARS, BaseJudge, indeterminate, written_verdict
from rbdspy.render import DEFAULT_BUDGET_TOKENS
from rbdspy.signatures import JudgeWithConfidence

DEFAULT_CONFIDENCE_THRESHOLD = 0.7


class ConfidenceJudge(BaseJudge):
    """One `JudgeWithConfidence` call (`confident`); returns `confidence` (None when unusable)
    and `label` (the label the LM wrote, kept when the confidence was too low) besides the verdict.

    Args (besides `BaseJudge`'s):
        threshold: the confidence below which the verdict is indeterminate.
    """

    design = "confidence"

    def __init__(
        self,
        max_chars: int = DEFAULT_MAX_CHARS,
        *,
        renderer: Any = DEFAULT_BUDGET_TOKENS,
        threshold: float = DEFAULT_CONFIDENCE_THRESHOLD,
    ):
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold must be within [0, 1]; got {threshold!r}")
        super().__init__(max_chars, renderer=renderer)
        self.threshold = threshold
        self.confident = dspy.Predict(JudgeWithConfidence)

    def _plan(self, task: str, trajectory: Any) -> Plan:
        pred, error = yield from attempt(self.confident, self._inputs(task, trajectory), "judge with confidence")
        if error is not None:
            return dspy.Prediction(verdict=indeterminate("judge call failed", error), confidence=None, label=None)
        verdict = written_verdict(pred)
        confidence = _unit_interval(getattr(pred, "confidence", None))
        label = verdict.label if verdict.is_determinate else None
        if confidence is None:
            verdict = indeterminate("judge gave no usable confidence")
        elif verdict.is_determinate and confidence < self.threshold:
            verdict = indeterminate(
                f"confidence {confidence:.2f} is below the threshold {self.threshold:.2f}; "
                f"the {label} verdict is not used. {verdict.rationale}"
            )
        return dspy.Prediction(verdict=verdict, confidence=confidence, label=label)


def _unit_interval(value: Any) -> float | None:
    """A confidence as a float in [0, 1]: a percentage (1 < x <= 100) is scaled; anything else
    (missing, not a number, negative, over 100) is None."""
    try:
        number = float(str(value).strip().rstrip("%"))
    except (TypeError, ValueError):
        return None
    if not math.isfinite(number) or number < 0 or number > 100:
        return None
    return number / 100 if number > 1 else number
