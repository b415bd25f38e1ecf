import asyncio

import dspy
import pytest
from dspy.utils import DummyLM

from rbdspy.scaling.selector import TrajectorySelector, rule_choice
from rbdspy.types import Step, Trajectory, Verdict

OK, FAIL = Verdict(label="success"), Verdict(label="failure")


def traj(n_steps, outcome=None, text="step"):
    return Trajectory(
        task="t", steps=[Step(role="agent", content=f"{text} {i}") for i in range(n_steps)], outcome=outcome
    )


def test_rule_prefers_known_success_then_judge_success_then_fewest_steps():
    trajectories = [traj(2), traj(9), traj(5), traj(1)]
    assert rule_choice(trajectories, [FAIL, OK, OK, FAIL], [None] * 4) == 2  # judged success, fewer steps
    assert rule_choice(trajectories, [FAIL, OK, OK, FAIL], [None, None, None, True]) == 3  # measured success wins
    assert rule_choice(trajectories, [None, None, None, None], [None] * 4) == 3  # nothing known: fewest steps
    assert rule_choice([traj(3), traj(3)], [OK, OK], [None, None]) == 0  # ties: the earliest
    # an environment's own step count is used when it reports one
    counted = [traj(1), traj(8)]
    counted[0].metadata["n_steps"] = 20
    assert rule_choice(counted, [OK, OK], [None, None]) == 1


def test_lm_pick_is_used_and_the_prompt_shows_verdicts_outcomes_and_steps():
    lm = DummyLM([{"rationale": "attempt 1 finished", "best_index": 1}])
    dspy.configure(lm=lm)
    pred = TrajectorySelector()(task="t", trajectories=[traj(2), traj(3)], verdicts=[FAIL, OK], outcomes=[None, True])
    assert (pred.index, pred.method, pred.rationale) == (1, "lm", "attempt 1 finished")
    prompt = lm.history[-1]["messages"][-1]["content"]
    assert "## Attempt 0 (judge verdict: failure; measured outcome: unknown; steps: 2)" in prompt
    assert "## Attempt 1 (judge verdict: success; measured outcome: success; steps: 3)" in prompt


@pytest.mark.parametrize(
    "answer", [{"rationale": "-", "best_index": 5}, {"rationale": "-", "best_index": -1}, {"nonsense": "x"}]
)
def test_bad_answers_fall_back_to_the_rule(answer):
    dspy.configure(lm=DummyLM([answer]))
    pred = TrajectorySelector()(task="t", trajectories=[traj(2), traj(4)], verdicts=[FAIL, OK])
    assert pred.index == 1 and pred.method == "rule"


def test_a_pick_against_the_measured_outcome_is_overruled():
    dspy.configure(lm=DummyLM([{"rationale": "0 is shorter", "best_index": 0}]))
    pred = TrajectorySelector()(
        task="t", trajectories=[traj(1, False), traj(4, True)], verdicts=[OK, FAIL], outcomes=[False, True]
    )
    assert pred.index == 1 and pred.method == "outcome"


def test_one_attempt_needs_no_lm_call():
    lm = DummyLM([])
    dspy.configure(lm=lm)
    assert TrajectorySelector()(task="t", trajectories=[traj(1)]).method == "single" and lm.history == []


def test_async_matches_sync():
    dspy.configure(lm=DummyLM({"## best_index ##": {"rationale": "-", "best_index": 1}}))
    pred = asyncio.run(TrajectorySelector().acall(task="t", trajectories=[traj(2), traj(3)], verdicts=[FAIL, OK]))
    assert pred.index == 1 and pred.method == "lm"


def test_mismatched_lengths_are_rejected():
    with pytest.raises(ValueError, match="one of each"):
        TrajectorySelector()(task="t", trajectories=[traj(1), traj(2)], verdicts=[OK])
    with pytest.raises(ValueError, match="at least one"):
        TrajectorySelector()(task="t", trajectories=[])
