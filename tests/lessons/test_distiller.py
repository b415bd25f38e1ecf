import asyncio

import dspy
import pytest
from dspy.utils import DummyLM

from rbdspy.lessons.distiller import ContrastiveDistiller


def drafts(n):
    return [{"title": f"L{i}", "description": "When d.", "content": "Do c."} for i in range(n)]


def test_contrast_of_k_attempts_caps_at_five_and_shows_every_verdict():
    lm = DummyLM([{"lessons": drafts(8)}])
    dspy.configure(lm=lm)
    trajs = [[{"role": "assistant", "content": f"attempt {i}"}] for i in range(3)]
    pred = ContrastiveDistiller()(task="t", trajectories=trajs, verdicts=["success", "failure", "failure"])
    assert len(pred.lessons) == 5
    prompt = lm.history[-1]["messages"][-1]["content"]
    assert "Attempt 0 (verdict: success)" in prompt and "Attempt 2 (verdict: failure)" in prompt


def test_mismatched_inputs_are_rejected():
    with pytest.raises(ValueError, match="one verdict per trajectory"):
        ContrastiveDistiller()(task="t", trajectories=[[]], verdicts=["success", "failure"])
    with pytest.raises(ValueError, match="at least one"):
        ContrastiveDistiller()(task="t", trajectories=[], verdicts=[])


def test_garbage_gives_no_lessons_async():
    dspy.configure(lm=DummyLM([{"lessons": "nope"}] * 3))
    pred = asyncio.run(ContrastiveDistiller().acall(task="t", trajectories=[[]], verdicts=["failure"]))
    assert pred.lessons == []
