"""ContrastiveDistiller: lessons from what separated successful from failed attempts at one task
(parallel MaTTS)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import dspy

from rbdspy.modules.extractor import _as_verdict
from rbdspy.modules.judge import render_trajectory
from rbdspy.modules.lesson_caps import MAX_LESSONS_PER_CONTRAST, normalise_lessons
from rbdspy.signatures import ContrastTrajectories
from rbdspy.types import Verdict

log = logging.getLogger(__name__)


class ContrastiveDistiller(dspy.Module):
    """k trajectories of the same task, each with its verdict -> at most 5 lessons.

    The attempts share a character budget (`max_chars`) so k long trajectories still fit a
    small model's context. Returns `Prediction(lessons=list[Lesson])`; an LM error or a
    malformed answer gives no lessons.
    """

    def __init__(self, max_lessons: int = MAX_LESSONS_PER_CONTRAST, max_chars: int = 9000):
        super().__init__()
        if not 1 <= max_lessons <= MAX_LESSONS_PER_CONTRAST:
            raise ValueError(f"max_lessons must be between 1 and {MAX_LESSONS_PER_CONTRAST}; got {max_lessons}")
        self.max_lessons = max_lessons
        self.max_chars = max_chars
        self.contrast = dspy.Predict(ContrastTrajectories)

    def _inputs(self, task: str, trajectories: Sequence[Any], verdicts: Sequence[Verdict | str]) -> dict[str, str]:
        if not trajectories:
            raise ValueError("ContrastiveDistiller needs at least one trajectory")
        if len(trajectories) != len(verdicts):
            raise ValueError(
                f"got {len(trajectories)} trajectories but {len(verdicts)} verdicts; pass one verdict per trajectory"
            )
        budget = max(500, self.max_chars // len(trajectories))
        blocks = []
        for i, (trajectory, verdict) in enumerate(zip(trajectories, verdicts)):
            verdict = _as_verdict(verdict)
            blocks.append(f"## Attempt {i} (verdict: {verdict.label})\n{render_trajectory(trajectory, task, budget)}")
        return {"task": task, "attempts": "\n\n".join(blocks)}

    def forward(self, task: str, trajectories: Sequence[Any], verdicts: Sequence[Verdict | str]) -> dspy.Prediction:
        inputs = self._inputs(task, trajectories, verdicts)
        try:
            pred = self.contrast(**inputs)
        except Exception as error:
            log.warning("contrastive distillation failed: %s", error)
            return dspy.Prediction(lessons=[])
        return dspy.Prediction(lessons=normalise_lessons(getattr(pred, "lessons", None), self.max_lessons))

    async def aforward(
        self, task: str, trajectories: Sequence[Any], verdicts: Sequence[Verdict | str]
    ) -> dspy.Prediction:
        inputs = self._inputs(task, trajectories, verdicts)
        try:
            pred = await self.contrast.acall(**inputs)
        except Exception as error:
            log.warning("contrastive distillation failed: %s", error)
            return dspy.Prediction(lessons=[])
        return dspy.Prediction(lessons=normalise_lessons(getattr(pred, "lessons", None), self.max_lessons))
