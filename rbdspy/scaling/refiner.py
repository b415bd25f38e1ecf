"""TrajectoryRefiner: one sequential-MaTTS pass, in which the model re-examines its attempt
against the task, corrects it and confirms the answer.

The pass does not replace the trajectory: it appends the re-examination to it as a
`refinement` step. The paper keeps these intermediate notes because they hold corrections and
insights the final answer does not show, and sequential MaTTS distils memory from the
trajectory *with* its notes.
"""

from __future__ import annotations

import dspy

from rbdspy.core.lm_errors import attempt
from rbdspy.core.plan import Plan, arun, run
from rbdspy.core.text import clip
from rbdspy.judge.trajectory_text import render_trajectory
from rbdspy.signatures import RefineTrajectory
from rbdspy.types import Step, Trajectory

REFINEMENT_ROLE = "refinement"
NOTES_MAX = 2000
ANSWER_MAX = 1000


def refined_trajectory(trajectory: Trajectory, notes: str, refined_answer: str, pass_number: int) -> Trajectory:
    """`trajectory` with the pass appended. The final answer becomes the refined one, except
    when an environment scored the trajectory: re-examining cannot change what was played, so
    the environment's summary stays the final answer and the claim stays in the step."""
    step = Step(
        role=REFINEMENT_ROLE,
        content=f"Re-examination {pass_number}: {notes}\nAnswer now: {refined_answer}",
        metadata={"pass": pass_number},
    )
    update: dict = {"steps": [*trajectory.steps, step]}
    if trajectory.outcome is None and refined_answer:
        update["final_answer"] = refined_answer
    return trajectory.model_copy(update=update)


def without_refinements(trajectory: Trajectory) -> Trajectory:
    """The trajectory with its refinement steps removed (the final answer is kept)."""
    return trajectory.model_copy(update={"steps": [s for s in trajectory.steps if s.role != REFINEMENT_ROLE]})


class TrajectoryRefiner(dspy.Module):
    """`RefineTrajectory` over one trajectory -> `Prediction(notes, refined_answer, trajectory,
    error)` where `trajectory` is the input with the pass appended.

    An LM error or empty notes gives `notes=None`, `error` saying why, and the trajectory
    unchanged (the pass is skipped; the loop goes on with what it had). Notes and answer are
    clipped in code.
    """

    def __init__(self, max_chars: int = 6000):
        super().__init__()
        self.max_chars = max_chars
        self.refine = dspy.Predict(RefineTrajectory)

    @staticmethod
    def _skipped(trajectory: Trajectory, why: str) -> dspy.Prediction:
        return dspy.Prediction(notes=None, refined_answer=None, trajectory=trajectory, error=why[:1000])

    def _plan(self, task: str, trajectory: Trajectory, pass_number: int) -> Plan:
        trajectory = Trajectory.coerce(trajectory, task=task)
        inputs = {"task": task, "trajectory": render_trajectory(trajectory, task, self.max_chars)}
        pred, error = yield from attempt(self.refine, inputs, f"refinement pass {pass_number}")
        if error is not None:  # an LM that misbehaves skips the pass, never the loop
            return self._skipped(trajectory, f"{type(error).__name__}: {error}")
        notes = clip(str(getattr(pred, "notes", "") or ""), NOTES_MAX, collapse=False)
        answer = clip(str(getattr(pred, "refined_answer", "") or ""), ANSWER_MAX, collapse=False)
        if not notes:
            return self._skipped(trajectory, "the refiner wrote no notes")
        return dspy.Prediction(
            notes=notes,
            refined_answer=answer or None,
            error=None,
            trajectory=refined_trajectory(trajectory, notes, answer, pass_number),
        )

    def forward(self, task: str, trajectory: Trajectory, pass_number: int = 1) -> dspy.Prediction:
        return run(self._plan(task, trajectory, pass_number))

    async def aforward(self, task: str, trajectory: Trajectory, pass_number: int = 1) -> dspy.Prediction:
        return await arun(self._plan(task, trajectory, pass_number))
