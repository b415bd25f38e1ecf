import asyncio

import dspy
from dspy.utils import DummyLM

from rbdspy.scaling.refiner import REFINEMENT_ROLE, TrajectoryRefiner, refined_trajectory, without_refinements
from rbdspy.types import Step, Trajectory

NOTES = {"notes": "Step 1 skipped the unit check; multiply by twelve.", "refined_answer": "36"}


def traj(outcome=None):
    return Trajectory(
        task="3 feet in inches",
        steps=[Step(role="assistant", content="answer: 30")],
        final_answer="answer: 30",
        outcome=outcome,
    )


def test_a_pass_appends_its_notes_and_replaces_the_answer():
    lm = DummyLM([NOTES])
    dspy.configure(lm=lm)
    original = traj()
    pred = TrajectoryRefiner()(task="3 feet in inches", trajectory=original, pass_number=1)
    assert pred.notes == NOTES["notes"] and pred.refined_answer == "36" and pred.error is None
    assert pred.trajectory.steps[:-1] == original.steps and pred.trajectory.id == original.id
    last = pred.trajectory.steps[-1]
    assert last.role == REFINEMENT_ROLE and NOTES["notes"] in last.content and "36" in last.content
    assert pred.trajectory.final_answer == "36" and original.final_answer == "answer: 30"  # input untouched
    assert "answer: 30" in lm.history[-1]["messages"][-1]["content"]  # the model re-examined the attempt


def test_an_environment_scored_trajectory_keeps_its_recorded_answer():
    refined = refined_trajectory(traj(outcome=False), "notes", "36", 1)
    assert (
        refined.final_answer == "answer: 30"
        and refined.outcome is False
        and "Answer now: 36" in refined.steps[-1].content
    )


def test_an_lm_failure_or_empty_notes_skips_the_pass():
    for answers in ([{"garbage": "x"}], [{"notes": "  ", "refined_answer": "36"}]):
        dspy.configure(lm=DummyLM(answers))
        original = traj()
        pred = TrajectoryRefiner()(task="t", trajectory=original)
        assert pred.notes is None and pred.error and pred.trajectory == original


def test_long_notes_are_clipped():
    dspy.configure(lm=DummyLM([{"notes": "x" * 5000, "refined_answer": "y" * 5000}]))
    pred = TrajectoryRefiner()(task="t", trajectory=traj())
    assert len(pred.notes) <= 2000 and len(pred.refined_answer) <= 1000


def test_without_refinements_strips_only_the_passes():
    refined = refined_trajectory(refined_trajectory(traj(), "a", "1", 1), "b", "2", 2)
    stripped = without_refinements(refined)
    assert [s.role for s in stripped.steps] == ["assistant"] and stripped.final_answer == "2"


def test_async():
    dspy.configure(lm=DummyLM({"## notes ##": NOTES}))
    pred = asyncio.run(TrajectoryRefiner().acall(task="t", trajectory=traj(), pass_number=2))
    assert pred.notes == NOTES["notes"] and pred.trajectory.steps[-1].metadata == {"pass": 2}
