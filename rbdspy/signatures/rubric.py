"""The rubric's prompt: an LM grades the lessons an extractor wrote (`rbdspy.optimizers.rubric`,
an optional part of the extractor metric)."""

import dspy


class GradeLessons(dspy.Signature):
    """Grade lessons an agent distilled from one attempt at a task, for a memory that later
    agents read before similar tasks. 5: each lesson is a correct, actionable strategy (or
    guardrail) that would help on other tasks of this kind and, for a failure, addresses what
    actually went wrong; 3: useful but vague, partly episode-specific, or missing the cause;
    1: wrong, a replay of this episode, or useless."""

    task: str = dspy.InputField()
    outcome: str = dspy.InputField(desc="What the environment says happened, and why it failed if it did")
    lessons: str = dspy.InputField()
    critique: str = dspy.OutputField(desc="One or two sentences")
    grade: int = dspy.OutputField(desc="1 to 5")
