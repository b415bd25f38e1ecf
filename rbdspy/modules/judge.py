"""Judge: labels a trajectory success or failure, and never lets an LM problem through as a verdict."""

from __future__ import annotations

from typing import Any

import dspy

from rbdspy.modules.lm_errors import attempt
from rbdspy.modules.plan import Plan, arun, run
from rbdspy.signatures import JudgeTrajectory
from rbdspy.types import Trajectory, Verdict


def render_trajectory(trajectory: Any, task: str, max_chars: int) -> str:
    """Prompt text for a trajectory given in any accepted shape, or already rendered (str)."""
    if isinstance(trajectory, str):
        return trajectory
    return Trajectory.coerce(trajectory, task=task).render(max_chars)


def indeterminate(what: str, error: BaseException | None = None) -> Verdict:
    detail = f": {type(error).__name__}: {error}" if error else ""
    return Verdict(label="indeterminate", rationale=f"{what}{detail}"[:500])


class Judge(dspy.Module):
    """Judge over `JudgeTrajectory`: a rationale, then the verdict, in one `dspy.Predict` call
    (the rationale is the reasoning; a separate chain-of-thought field would double the tokens
    a small local model generates for the same evidence).

    Returns `Prediction(verdict=Verdict)`. An LM error, an empty answer or a label outside
    success/failure gives `indeterminate` (the bank then writes nothing); a missing or unusable
    LM raises `LMSetupError`; a trajectory in a shape rbdspy does not accept is the caller's bug
    and raises ValueError.
    """

    def __init__(self, max_chars: int = 6000):
        super().__init__()
        self.predict = dspy.Predict(JudgeTrajectory)
        self.max_chars = max_chars  # what the judge is shown of a trajectory

    @staticmethod
    def _verdict(pred: dspy.Prediction) -> Verdict:
        label = str(getattr(pred, "verdict", "") or "").strip().lower()
        if label not in ("success", "failure"):
            return indeterminate(f"judge answered {label!r}, not success/failure")
        rationale = str(getattr(pred, "rationale", "") or "")
        return Verdict(label=label, rationale=rationale.strip()[:2000])

    def _plan(self, task: str, trajectory: Any) -> Plan:
        inputs = {"task": task, "trajectory": render_trajectory(trajectory, task, self.max_chars)}
        pred, error = yield from attempt(self.predict, inputs, "judge")
        if error is not None:
            return dspy.Prediction(verdict=indeterminate("judge call failed", error))
        return dspy.Prediction(verdict=self._verdict(pred))

    def forward(self, task: str, trajectory: Any) -> dspy.Prediction:
        return run(self._plan(task, trajectory))

    async def aforward(self, task: str, trajectory: Any) -> dspy.Prediction:
        return await arun(self._plan(task, trajectory))
