"""The rationale judge (the paper's design, rbdspy's default before the probability judge): a
rationale and a verdict in one call; anything unusable is indeterminate."""

import asyncio

import dspy
import pytest
from dspy.utils import DummyLM

from rbdspy.judge import Judge, RationaleJudge

TRAJ = [
    {"role": "user", "content": "boil the water"},
    {"role": "assistant", "content": "activated stove; water is boiling"},
]


def test_judge_returns_the_lm_verdict_and_rationale():
    dspy.configure(lm=DummyLM([{"verdict": "success", "rationale": "boiling observed"}]))
    v = RationaleJudge()(task="boil water", trajectory=TRAJ).verdict
    assert v.label == "success" and v.rationale == "boiling observed" and v.source == "judge"


def test_judge_async_path():
    dspy.configure(lm=DummyLM([{"verdict": "failure", "rationale": "never boiled"}]))
    v = asyncio.run(RationaleJudge().acall(task="boil water", trajectory=TRAJ)).verdict
    assert v.label == "failure"


@pytest.mark.parametrize(
    "answer",
    [
        {"verdict": "probably", "rationale": "?"},  # label outside the Literal
        {"verdict": "", "rationale": ""},  # empty
        {"nonsense": "no fields at all"},  # unparseable
    ],
)
def test_bad_lm_answers_give_indeterminate_not_an_exception(answer):
    dspy.configure(lm=DummyLM([answer] * 3))
    v = RationaleJudge()(task="boil water", trajectory=TRAJ).verdict
    assert v.label == "indeterminate"


def test_lm_error_gives_indeterminate():
    class Broken(dspy.Module):
        def forward(self, **kw):
            raise RuntimeError("server down")

    judge = RationaleJudge()
    judge.predict = Broken()
    v = judge(task="t", trajectory=TRAJ).verdict
    assert v.label == "indeterminate" and "server down" in v.rationale


def test_bad_trajectory_shape_is_the_callers_error():
    with pytest.raises(ValueError, match="Accepted"):
        Judge()(task="t", trajectory=12345)


def test_long_trajectories_are_windowed_before_the_lm_sees_them():
    seen = {}

    class Spy(dspy.Module):
        def forward(self, task, trajectory):
            seen["len"] = len(trajectory)
            return dspy.Prediction(verdict="failure", rationale="r")

    judge = RationaleJudge(max_chars=1000, renderer=None)  # the character-cut rendering
    judge.predict = Spy()
    long = [{"role": "env", "content": "x" * 200} for _ in range(100)]
    assert judge(task="t", trajectory=long).verdict.label == "failure"
    assert seen["len"] < 1100
