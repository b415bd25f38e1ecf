"""The rationale judge, the paper's: a rationale, then the verdict, in one call."""

from __future__ import annotations

from typing import Any

import dspy

from rbdspy.core.lm_errors import attempt
from rbdspy.core.plan import Plan
from rbdspy.judge.base import DEFAULT_MAX_CHARS, BaseJudge, indeterminate, written_verdict
from rbdspy.render import DEFAULT_BUDGET_TOKENS, NOT_SHOWN_RULE
from rbdspy.signatures import JudgeTrajectory


def rationale_predict(renderer: Any) -> dspy.Predict:
    """The rationale-then-verdict predictor (`JudgeTrajectory`). A judge shown the trajectory
    through a renderer is told that parts may be left out (NOT_SHOWN_RULE); the character-cut
    rendering (None) keeps the prompt rbdspy sent before renderers."""
    signature = JudgeTrajectory
    if renderer is not None:
        signature = signature.with_instructions(f"{JudgeTrajectory.instructions}\n\n{NOT_SHOWN_RULE}")
    return dspy.Predict(signature)


class RationaleJudge(BaseJudge):
    """The paper's judge over `JudgeTrajectory`: a rationale, then the verdict, in one
    `dspy.Predict` call (`predict`). See `BaseJudge` for the arguments and what it returns."""

    design = "rationale"

    def __init__(self, max_chars: int = DEFAULT_MAX_CHARS, *, renderer: Any = DEFAULT_BUDGET_TOKENS):
        super().__init__(max_chars, renderer=renderer)
        # Named "predict" as self-consistency's, which reads the same prompt: a compiled judge
        # loads into either.
        self.predict = rationale_predict(self.renderer)

    def _plan(self, task: str, trajectory: Any) -> Plan:
        pred, error = yield from attempt(self.predict, self._inputs(task, trajectory), "judge")
        if error is not None:
            return dspy.Prediction(verdict=indeterminate("judge call failed", error))
        return dspy.Prediction(verdict=written_verdict(pred))
