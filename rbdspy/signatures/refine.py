"""Sequential MaTTS: re-examine one's own trajectory and correct it.

A signature only for now; the MaTTS module builds the refinement loop on it."""

import dspy


class RefineTrajectory(dspy.Signature):
    """Re-examine the attempt below against the task, requirement by requirement. Point out
    any step that was wrong, skipped or unverified, say what the corrected approach is, and
    state the answer you would now give. Your notes are kept as lessons for later tasks, so
    make them about the approach, not about this task's literals."""

    task: str = dspy.InputField()
    trajectory: str = dspy.InputField(desc="The previous attempt")
    notes: str = dspy.OutputField(desc="What was wrong or unverified, and the corrected approach")
    refined_answer: str = dspy.OutputField(desc="The answer after correction")
