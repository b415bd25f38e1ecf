"""Sequential MaTTS: re-examine one's own trajectory and correct it. The notes are kept: they
are distilled into memory together with the final trajectory."""

import dspy


class RefineTrajectory(dspy.Signature):
    """Re-examine the attempt below against the task, requirement by requirement. Point out
    any step that was wrong, skipped or unverified, say what the corrected approach is, and
    state the answer you would now give; if everything checks out, confirm the answer. Your
    notes are kept as lessons for later tasks, so make them about the approach, not about this
    task's literals."""

    task: str = dspy.InputField()
    trajectory: str = dspy.InputField(desc="The previous attempt, with any earlier re-examinations")
    notes: str = dspy.OutputField(desc="What was wrong or unverified, and the corrected approach")
    refined_answer: str = dspy.OutputField(desc="The answer after correction, or the confirmed answer")
