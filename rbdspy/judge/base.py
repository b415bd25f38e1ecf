"""What every judge is: a DSPy module that labels a trajectory success, failure or indeterminate.

`BaseJudge` is the one protocol the judge designs share (rbdspy/judge/judge.py lists them): call
it with `task` and `trajectory` (any shape `Trajectory.coerce` accepts, or text already rendered)
and it returns `Prediction(verdict=Verdict)`, plus what its design measures. An LM error, an
empty answer or a label outside success/failure gives `indeterminate` (the bank then writes
nothing); a missing or unusable LM raises `LMSetupError`; a trajectory in a shape rbdspy does not
accept is the caller's bug and raises ValueError. Nothing else raises once the judge is built.

A design writes its logic once as a plan (`_plan`, rbdspy/core/plan.py), which `forward` and
`aforward` run. `design` names it, as `judge_for` and the benchmark records name it.
"""

from __future__ import annotations

from typing import Any, ClassVar

import dspy

from rbdspy.core.plan import Plan, arun, run
from rbdspy.judge.trajectory_text import render_trajectory
from rbdspy.render import DEFAULT_BUDGET_TOKENS, as_renderer
from rbdspy.types import Verdict

DEFAULT_MAX_CHARS = 6000


def indeterminate(what: str, error: BaseException | None = None) -> Verdict:
    """The verdict of a judge that could not decide (`what` went wrong, with the error if any)."""
    detail = f": {type(error).__name__}: {error}" if error else ""
    return Verdict(label="indeterminate", rationale=f"{what}{detail}"[:500])


class BaseJudge(dspy.Module):
    """A judge: `judge(task=..., trajectory=...)` -> `Prediction(verdict=Verdict, ...)`.

    Args:
        max_chars: what `Trajectory.render` shows of a trajectory (when no renderer is given).
        renderer: a token budget (int, default DEFAULT_BUDGET_TOKENS), an EvidenceRenderer, a
            callable, or None (`Trajectory.render(max_chars)`, the rendering by characters).
    """

    design: ClassVar[str] = ""

    def __init__(self, max_chars: int = DEFAULT_MAX_CHARS, *, renderer: Any = DEFAULT_BUDGET_TOKENS):
        super().__init__()
        self.max_chars = max_chars  # what the judge is shown of a trajectory
        self.renderer = as_renderer(renderer)

    def _plan(self, task: str, trajectory: Any) -> Plan:
        raise NotImplementedError

    def _inputs(self, task: str, trajectory: Any) -> dict:
        """The task and the trajectory as the prompt text a design that reads it whole is shown."""
        return {"task": task, "trajectory": render_trajectory(trajectory, task, self.max_chars, self.renderer)}

    def forward(self, task: str, trajectory: Any) -> dspy.Prediction:
        return run(self._plan(task, trajectory))

    async def aforward(self, task: str, trajectory: Any) -> dspy.Prediction:
        return await arun(self._plan(task, trajectory))


def written_verdict(pred: dspy.Prediction) -> Verdict:
    """The verdict an LM wrote (`verdict`, `rationale`); indeterminate for any other label."""
    label = str(getattr(pred, "verdict", "") or "").strip().lower()
    if label not in ("success", "failure"):
        return indeterminate(f"judge answered {label!r}, not success/failure")
    rationale = str(getattr(pred, "rationale", "") or "")
    return Verdict(label=label, rationale=rationale.strip()[:2000])
