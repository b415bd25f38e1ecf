"""ContrastiveDistiller: lessons from what separated successful from failed attempts at one task
(parallel MaTTS)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import dspy

from rbdspy.core.lm_errors import attempt
from rbdspy.core.plan import Plan, arun, run
from rbdspy.judge.trajectory_text import render_trajectory
from rbdspy.lessons.caps import MAX_LESSONS_PER_CONTRAST, check_max_lessons, normalise_lessons
from rbdspy.render import DISTILLER_BUDGET_TOKENS, EvidenceRenderer, as_renderer
from rbdspy.signatures import ContrastTrajectories
from rbdspy.types import Verdict


class ContrastiveDistiller(dspy.Module):
    """k trajectories of the same task, each with its verdict -> at most 5 lessons.

    The attempts share a character budget (`max_chars`) so k long trajectories still fit a
    small model's context. Returns `Prediction(lessons=list[Lesson])`; an LM error or a
    malformed answer gives no lessons.

    `renderer` (a token budget, by default DISTILLER_BUDGET_TOKENS; an
    `rbdspy.render.EvidenceRenderer`; any Trajectory -> str) renders each attempt; an
    EvidenceRenderer's token budget is shared by the k attempts. None renders them with
    `Trajectory.render`, sharing `max_chars` instead.
    """

    def __init__(
        self,
        max_lessons: int = MAX_LESSONS_PER_CONTRAST,
        max_chars: int = 9000,
        *,
        renderer: Any = DISTILLER_BUDGET_TOKENS,
    ):
        super().__init__()
        self.max_lessons = check_max_lessons(max_lessons, MAX_LESSONS_PER_CONTRAST)
        self.max_chars = max_chars
        self.renderer = as_renderer(renderer)
        self.contrast = dspy.Predict(ContrastTrajectories)

    def _inputs(self, task: str, trajectories: Sequence[Any], verdicts: Sequence[Verdict | str]) -> dict[str, str]:
        if not trajectories:
            raise ValueError("ContrastiveDistiller needs at least one trajectory")
        if len(trajectories) != len(verdicts):
            raise ValueError(
                f"got {len(trajectories)} trajectories but {len(verdicts)} verdicts; pass one verdict per trajectory"
            )
        budget = max(500, self.max_chars // len(trajectories))
        renderer = self.renderer
        if isinstance(renderer, EvidenceRenderer):
            renderer = renderer.with_budget(renderer.budget_tokens // len(trajectories))
        blocks = [
            f"## Attempt {i} (verdict: {Verdict.coerce(verdict).label})\n"
            f"{render_trajectory(trajectory, task, budget, renderer)}"
            for i, (trajectory, verdict) in enumerate(zip(trajectories, verdicts, strict=True))
        ]
        return {"task": task, "attempts": "\n\n".join(blocks)}

    def _plan(self, task: str, trajectories: Sequence[Any], verdicts: Sequence[Verdict | str]) -> Plan:
        pred, error = yield from attempt(self.contrast, self._inputs(task, trajectories, verdicts), "contrast")
        if error is not None:
            return dspy.Prediction(lessons=[])
        return dspy.Prediction(lessons=normalise_lessons(getattr(pred, "lessons", None), self.max_lessons))

    def forward(self, task: str, trajectories: Sequence[Any], verdicts: Sequence[Verdict | str]) -> dspy.Prediction:
        return run(self._plan(task, trajectories, verdicts))

    async def aforward(
        self, task: str, trajectories: Sequence[Any], verdicts: Sequence[Verdict | str]
    ) -> dspy.Prediction:
        return await arun(self._plan(task, trajectories, verdicts))
