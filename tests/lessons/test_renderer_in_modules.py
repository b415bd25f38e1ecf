"""Each part that renders a trajectory takes its renderer (`renderer=`; by default the evidence
renderer, `renderer=None` for the character-cut rendering from before it), and a bank shows each
part's trajectory through that part's renderer."""

from __future__ import annotations

import dspy
from dspy.utils import DummyLM

from rbdspy.judge import ConfidenceJudge, RationaleJudge
from rbdspy.lessons.distiller import ContrastiveDistiller
from rbdspy.lessons.extractor import Extractor
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
    Extractor()(task="cook", trajectory=walk(60), verdict="failure")  # the default: the evidence renderer
    assert trajectory_field(lm).split("[[ ## judge_rationale ## ]]")[0].strip() == EvidenceRenderer(1800)(walk(60))
    Extractor(renderer=None)(task="cook", trajectory=walk(60), verdict="failure")
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


class _Agent(dspy.Module):
    def __init__(self):
        super().__init__()
        self.predict = dspy.Predict("task, memory -> answer")

    def forward(self, task, memory):
        return dspy.Prediction(answer="done", trajectory=walk(60))


def _bank(tmp_path, **kwargs):
    from rbdspy import MemoryStore, ReasoningBank
    from rbdspy.memory.embedders import HashEmbedder

    return ReasoningBank(_Agent(), MemoryStore(tmp_path / "bank", embedder=HashEmbedder(dim=32)), **kwargs)


def _rendering_parts(renderer) -> dict:
    """Extractor and distiller parts that render with `renderer`."""
    return {"extractor": Extractor(renderer=renderer), "distiller": ContrastiveDistiller(renderer=renderer)}


def test_the_bank_shows_judge_and_extractor_one_renderer(tmp_path):
    renderer = EvidenceRenderer(budget_tokens=500)
    bank = _bank(tmp_path, judge=RationaleJudge(renderer=renderer), **_rendering_parts(renderer))
    assert (
        bank.judge.renderer is renderer and bank.extractor.renderer is renderer and bank.distiller.renderer is renderer
    )
    lm = DummyLM([{"rationale": "the dish was cooked", "verdict": "success"}, {"lessons": []}])
    dspy.configure(lm=lm)
    out = bank(task="cook")
    judged, extracted = (call["messages"][-1]["content"] for call in lm.history[-2:])
    shown = renderer(out.trajectory)  # the agent's steps plus its final answer
    assert shown in judged and shown in extracted
    assert "characters of the middle omitted" not in judged + extracted


def test_the_default_bank_shares_the_default_renderer_and_the_distiller_a_larger_budget(tmp_path):
    bank = _bank(tmp_path)
    assert bank.judge.design == "probability" and bank.judge.renderer == EvidenceRenderer(1800)
    assert bank.extractor.renderer == EvidenceRenderer(1800) and bank.distiller.renderer == EvidenceRenderer(2600)
    legacy = _bank(tmp_path, judge=ConfidenceJudge(renderer=None), **_rendering_parts(None))
    assert legacy.judge.renderer is None and legacy.extractor.renderer is None and legacy.distiller.renderer is None


def test_the_bank_takes_a_judge_of_another_design(tmp_path):
    judge = ConfidenceJudge(threshold=0.9)
    bank = _bank(tmp_path, judge=judge, **_rendering_parts(None))
    assert bank.judge is judge and bank.extractor.renderer is None
    dspy.configure(lm=DummyLM([{"rationale": "unsure", "verdict": "success", "confidence": 0.5}]))
    out = bank(task="cook")
    # below the threshold the confidence design answers indeterminate, so nothing is written
    assert out.verdict.label == "indeterminate" and out.memories_added == [] and len(bank.store) == 0


def test_the_bank_rejects_a_judge_that_is_not_one(tmp_path):
    import pytest

    with pytest.raises(TypeError, match="judge must be an rbdspy judge"):
        _bank(tmp_path, judge=dspy.Predict("task, trajectory -> verdict"))
    with pytest.raises(TypeError, match="renderer must be"):
        Extractor(renderer="evidence")
