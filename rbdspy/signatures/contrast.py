"""Parallel MaTTS: lessons from contrasting several attempts at the same task."""

import dspy

from rbdspy.types import LessonDraft


class ContrastTrajectories(dspy.Signature):
    """Several agents attempted the same task; each attempt is shown with its verdict.
    Compare them: what did the successful attempts consistently do that the failed ones did
    not, and what mistakes recur among the failures? If all attempts share a verdict, compare
    the more efficient ones with the rest.

    Distil at most five lessons from these differences, each with a short title, a
    one-sentence description of when it applies, and one to three sentences of strategy or
    guardrail. Keep only what held across attempts, not one attempt's luck, and copy no
    object names, numbers, locations or other literals from the task."""

    task: str = dspy.InputField()
    attempts: str = dspy.InputField(desc="Numbered attempts, each with its verdict and steps")
    lessons: list[LessonDraft] = dspy.OutputField(desc="0 to 5 lessons, each with title, description, content")
