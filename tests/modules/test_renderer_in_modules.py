"""One renderer serves the judge, the extractor and the distiller (opt-in `renderer=`)."""

from __future__ import annotations

import dspy
from dspy.utils import DummyLM

from rbdspy.modules.distiller import ContrastiveDistiller
from rbdspy.modules.extractor import Extractor
from rbdspy.render import EvidenceRenderer
from rbdspy.types import Step, Trajectory

ROOM = "You are in the kitchen. There is a stove, a fridge and a counter with a knife and a cookbook on it."


def walk(n: int) -> Trajectory:
    steps = [Step(role="env", content=ROOM)]
    for i in range(n):
        steps += [Step(role="agent", content=f"look around {i}"), Step(role="env", content=f"{ROOM} Clock {i}. " * 3)]
    return Trajectory(task="cook", steps=steps)


def trajectory_field(lm) -> str:
    return lm.history[-1]["messages"][-1]["content"].split("[[ ## trajectory ## ]]")[1]


def test_extractor_reads_the_trajectory_through_the_renderer():
    renderer = EvidenceRenderer(budget_tokens=500)
    lm = DummyLM([{"lessons": []}] * 2)
    dspy.configure(lm=lm)
    Extractor(renderer=renderer)(task="cook", trajectory=walk(60), verdict="failure")
    assert trajectory_field(lm).split("[[ ## judge_rationale ## ]]")[0].strip() == renderer(walk(60))
    Extractor()(task="cook", trajectory=walk(60), verdict="failure")  # the default is unchanged
    assert "characters of the middle omitted" in trajectory_field(lm)


def test_distiller_shares_the_token_budget_between_attempts():
    renderer = EvidenceRenderer(budget_tokens=1200)
    lm = DummyLM([{"lessons": []}])
    dspy.configure(lm=lm)
    ContrastiveDistiller(renderer=renderer)(
        task="cook", trajectories=[walk(60), walk(61)], verdicts=["success", "failure"]
    )
    attempts = lm.history[-1]["messages"][-1]["content"]
    assert renderer.with_budget(600)(walk(60)) in attempts and renderer.with_budget(600)(walk(61)) in attempts
    assert "NOT SHOWN, to fit the budget" in attempts


def test_a_plain_callable_is_a_renderer():
    lm = DummyLM([{"lessons": []}])
    dspy.configure(lm=lm)
    Extractor(renderer=lambda t: f"{len(t.steps)} steps")(task="cook", trajectory=walk(3), verdict="success")
    assert "7 steps" in trajectory_field(lm)
