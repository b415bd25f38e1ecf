"""Best-of-N: choose the best of several attempts at one task (parallel MaTTS and its vanilla
baseline pick the trajectory they answer with through this prompt)."""

import dspy


class SelectBestTrajectory(dspy.Signature):
    """Several attempts at the same task are shown, numbered from 0, with their judge verdicts
    and, where known, their measured outcomes. Pick the single best attempt. Rank by: progress
    toward every requirement of the task, then efficiency (fewer wasted or repeated steps),
    then the absence of loops and of severe errors. A measured outcome outweighs a verdict,
    and a verdict outweighs your own impression."""

    task: str = dspy.InputField()
    attempts: str = dspy.InputField(desc="Numbered attempts with verdicts and steps")
    # The rationale comes first, so the choice is decoded after the comparison is written down.
    rationale: str = dspy.OutputField(desc="One or two sentences comparing the attempts on the rubric")
    best_index: int = dspy.OutputField(desc="Number of the best attempt")
