"""The extractor of a success-only memory design: a success becomes one item of the design's own
kind, a failure or an indeterminate verdict nothing.

Why a base class: Synapse's exemplars, AWM's workflows and the agent's own demonstrations differ
only in what one success is written as (`_drafts`). The writer stands where the bank's Extractor
stands, so the bank's Learner judges, stores and counts uses as for ReasoningBank and only what is
written differs.
"""

from __future__ import annotations

from typing import Any

import dspy

from rbdspy.core.plan import Plan, arun, run
from rbdspy.lessons.caps import normalise_lessons
from rbdspy.types import Lesson, Trajectory, Verdict


class SuccessItemWriter(dspy.Module):
    """`_drafts(trajectory)` (a plan) gives the drafts of one success; the first that fits the
    lesson caps is written (`_finish` may add data to it)."""

    def _drafts(self, trajectory: Trajectory) -> Plan:  # pragma: no cover - abstract
        raise NotImplementedError

    def _finish(self, lesson: Lesson, trajectory: Trajectory) -> Lesson | None:
        """The lesson to store for `trajectory` (None: nothing); by default as drafted."""
        return lesson

    def _plan(self, task: str, trajectory: Any, verdict: Verdict | str) -> Plan:
        if not Verdict.coerce(verdict).is_success:
            return dspy.Prediction(lessons=[], kind=None)
        trajectory = Trajectory.coerce(trajectory, task=task)
        drafts = yield from self._drafts(trajectory)
        lessons = [done for lesson in normalise_lessons(drafts, cap=1) if (done := self._finish(lesson, trajectory))]
        return dspy.Prediction(lessons=lessons, kind="success")

    def records(self, task: str, trajectory: Any, verdict: Verdict | str) -> list[Lesson]:
        """Nothing: a success-only design writes an item only for a judged success, and a bank whose
        agent reads no lessons judges nothing (`Extractor.records` is its counterpart)."""
        return []

    def forward(self, task: str, trajectory: Any, verdict: Verdict | str) -> dspy.Prediction:
        return run(self._plan(task, trajectory, verdict))

    async def aforward(self, task: str, trajectory: Any, verdict: Verdict | str) -> dspy.Prediction:
        return await arun(self._plan(task, trajectory, verdict))
