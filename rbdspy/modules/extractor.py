"""Extractor: distils lessons from one judged trajectory, routed on the verdict."""

from __future__ import annotations

import logging
from typing import Any

import dspy

from rbdspy.modules.judge import render_trajectory
from rbdspy.modules.lesson_caps import MAX_LESSONS_PER_TRAJECTORY, normalise_lessons
from rbdspy.signatures import ExtractFailureLessons, ExtractSuccessLessons
from rbdspy.types import Verdict

log = logging.getLogger(__name__)


def _as_verdict(verdict: Verdict | str) -> Verdict:
    if isinstance(verdict, Verdict):
        return verdict
    if verdict in ("success", "failure", "indeterminate"):
        return Verdict(label=verdict)
    raise ValueError(f"verdict must be a Verdict or one of 'success', 'failure', 'indeterminate'; got {verdict!r}")


class Extractor(dspy.Module):
    """Success trajectories go to `ExtractSuccessLessons`, failures to `ExtractFailureLessons`
    (guardrails); an indeterminate verdict extracts nothing and calls no LM.

    Returns `Prediction(lessons=list[Lesson], kind="success"|"failure"|None, drafts=...)`. At
    most `max_lessons` (3) lessons, each clipped to the Lesson limits; an LM error or a
    malformed answer gives no lessons. `drafts` is what the LM wrote before the caps were
    enforced (None when nothing was parsed), so a compile metric can reward answers that needed
    no clipping instead of only ever seeing the clipped result.
    """

    def __init__(self, max_lessons: int = MAX_LESSONS_PER_TRAJECTORY, max_chars: int = 6000):
        super().__init__()
        if not 1 <= max_lessons <= MAX_LESSONS_PER_TRAJECTORY:
            raise ValueError(f"max_lessons must be between 1 and {MAX_LESSONS_PER_TRAJECTORY}; got {max_lessons}")
        self.max_lessons = max_lessons
        self.max_chars = max_chars
        self.success = dspy.Predict(ExtractSuccessLessons)
        self.failure = dspy.Predict(ExtractFailureLessons)

    def _route(self, task: str, trajectory: Any, verdict: Verdict | str):
        verdict = _as_verdict(verdict)
        if not verdict.is_determinate:
            return None, None, None
        predictor = self.success if verdict.is_success else self.failure
        inputs = {
            "task": task,
            "trajectory": render_trajectory(trajectory, task, self.max_chars),
            "judge_rationale": verdict.rationale or "(none given)",
        }
        return verdict.label, predictor, inputs

    def _result(self, kind, pred) -> dspy.Prediction:
        drafts = getattr(pred, "lessons", None)
        return dspy.Prediction(lessons=normalise_lessons(drafts, self.max_lessons), kind=kind, drafts=drafts)

    def forward(self, task: str, trajectory: Any, verdict: Verdict | str) -> dspy.Prediction:
        kind, predictor, inputs = self._route(task, trajectory, verdict)
        if predictor is None:
            return dspy.Prediction(lessons=[], kind=None)
        try:
            return self._result(kind, predictor(**inputs))
        except Exception as error:  # malformed LM output writes no memory
            log.warning("%s extraction failed: %s", kind, error)
            return dspy.Prediction(lessons=[], kind=kind)

    async def aforward(self, task: str, trajectory: Any, verdict: Verdict | str) -> dspy.Prediction:
        kind, predictor, inputs = self._route(task, trajectory, verdict)
        if predictor is None:
            return dspy.Prediction(lessons=[], kind=None)
        try:
            return self._result(kind, await predictor.acall(**inputs))
        except Exception as error:
            log.warning("%s extraction failed: %s", kind, error)
            return dspy.Prediction(lessons=[], kind=kind)
