"""An optional LM-graded rubric for extracted lessons.

The lexical parts of the extractor metric (format, literals, cause words) are cheap and
deterministic but cannot tell a sharp strategy from a platitude. The rubric asks an LM (ideally
a stronger one than the extractor's) to grade that, at the price of one more LM call per metric
call; it is off unless asked for (`rbdspy compile --rubric-lm ...`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import dspy

from rbdspy.signatures.rubric import GradeLessons
from rbdspy.types import Lesson

log = logging.getLogger(__name__)


class LessonRubric:
    """Callable `(gold, lessons) -> (score in [0, 1], critique)`. An LM error or an unusable
    grade scores 0 with the reason, never raises (a metric must not crash a compile)."""

    def __init__(self, lm: dspy.LM | None = None):
        self.lm = lm
        self.grade = dspy.Predict(GradeLessons)

    def __call__(self, gold: dspy.Example, lessons: Sequence[Lesson]) -> tuple[float, str]:
        outcome = f"{gold.label}" + (f": {gold.cause}" if gold.get("cause") else "")
        text = "\n".join(f"- {lesson.text()}" for lesson in lessons)
        try:
            # trace=None: the grading call must not enter the trace an optimizer is recording
            # for the program under compile (it would become a demo of an unknown predictor).
            with dspy.context(lm=self.lm or dspy.settings.lm, trace=None):
                pred = self.grade(task=gold.task, outcome=outcome, lessons=text)
            grade = int(pred.grade)
        except Exception as error:  # noqa: BLE001
            log.warning("lesson rubric failed: %s", error)
            return 0.0, f"rubric unavailable ({type(error).__name__})"
        grade = min(5, max(1, grade))
        return (grade - 1) / 4, f"grade {grade}/5: {pred.critique}"
