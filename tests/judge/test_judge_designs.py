"""The opt-in judge designs (checklist, self-consistency, confidence), how a design is chosen
by name, and the renderer option, on scripted LMs: each gives a verdict when the LM behaves and
`indeterminate` when it does not."""

from __future__ import annotations

import asyncio
import json

import dspy
import pytest
from dspy.utils import DummyLM
from judge_testing import boiled_water

from rbdspy.core.lm_errors import LMSetupError
from rbdspy.judge import (
    JUDGE_DESIGNS,
    BaseJudge,
    ChecklistJudge,
    ConfidenceJudge,
    Judge,
    ProbabilityJudge,
    RationaleJudge,
    SelfConsistencyJudge,
    judge_for,
)
from rbdspy.judge.self_consistency import majority_verdict
from rbdspy.lm.local_engine import AsyncLlamaEngine, LlamaEngine, RolloutSeedCallback
from rbdspy.render import NOT_SHOWN_RULE, EvidenceRenderer
from rbdspy.types import Step, Trajectory, Verdict

TRAJ = boiled_water()


def prompt(lm) -> str:
    return lm.history[-1]["messages"][-1]["content"]


def system(lm) -> str:
    return lm.history[-1]["messages"][0]["content"]


# ---- design selection ----------------------------------------------------------------------

CLASSES = {
    "rationale": RationaleJudge,
    "checklist": ChecklistJudge,
    "self-consistency": SelfConsistencyJudge,
    "confidence": ConfidenceJudge,
    "probability": ProbabilityJudge,
}


def test_the_default_judge_is_the_probability_judge_and_each_design_has_its_own_predictor():
    assert Judge is ProbabilityJudge and Judge().renderer == EvidenceRenderer(budget_tokens=1800)
    assert set(JUDGE_DESIGNS) == set(CLASSES)
    names = {design: [n for n, _ in judge_for(design).named_predictors()] for design in JUDGE_DESIGNS}
    assert names == {
        "rationale": ["predict"],
        "checklist": ["checklist"],
        "self-consistency": ["predict"],
        "confidence": ["confident"],
        "probability": ["last_steps_verdict", "actions_verdict"],
    }


@pytest.mark.parametrize("design", JUDGE_DESIGNS)
def test_judge_for_builds_the_class_of_the_design_named_with_its_options(design):
    judge = judge_for(design, renderer=None)
    assert type(judge) is CLASSES[design] and isinstance(judge, BaseJudge)
    assert judge.design == design and judge.renderer is None


def test_judge_for_passes_a_designs_own_options_and_refuses_anothers():
    assert judge_for("self-consistency", samples=5, temperature=0.9).samples == 5
    assert judge_for("confidence", threshold=0.9).threshold == 0.9
    assert judge_for("probability", band=(0.2, 0.5)).band == (0.2, 0.5)
    with pytest.raises(TypeError, match="samples"):
        judge_for("rationale", samples=3)


def test_a_bad_design_name_is_refused_naming_the_designs():
    with pytest.raises(ValueError, match="design must be one of") as error:
        judge_for("vibes")
    assert all(design in str(error.value) for design in JUDGE_DESIGNS) and "'vibes'" in str(error.value)


def test_only_the_probability_judge_has_a_band_to_calibrate():
    for design, cls in CLASSES.items():
        has = {name: hasattr(cls, name) for name in ("calibrate", "use_calibration", "band", "calibration")}
        assert set(has.values()) == {design == "probability"}, (design, has)


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="samples"):
        SelfConsistencyJudge(samples=0)
    with pytest.raises(ValueError, match="threshold"):
        ConfidenceJudge(threshold=1.5)


@pytest.mark.parametrize("design", JUDGE_DESIGNS)
def test_no_lm_is_a_setup_error_in_every_design(design):
    with pytest.raises(LMSetupError):
        judge_for(design)(task="t", trajectory=TRAJ)


@pytest.mark.parametrize("design", JUDGE_DESIGNS)
def test_an_lm_that_raises_gives_indeterminate_in_every_design(design):
    class Broken(dspy.Module):
        def forward(self, **kw):
            raise RuntimeError("server down")

    judge = judge_for(design)
    for name, _ in judge.named_predictors():
        setattr(judge, name, Broken())
    verdict = judge(task="t", trajectory=TRAJ).verdict
    assert verdict.label == "indeterminate"


@pytest.mark.parametrize("design", JUDGE_DESIGNS)
def test_garbage_gives_indeterminate_in_every_design(design):
    dspy.configure(lm=DummyLM([{"nonsense": "no fields"}] * 12))
    assert judge_for(design)(task="t", trajectory=TRAJ).verdict.label == "indeterminate"


# ---- the renderer option -------------------------------------------------------------------


def test_a_renderer_shows_the_evidence_and_adds_the_not_shown_rule():
    steps = [Step(role="env", content="start")]
    for i in range(80):
        steps += [Step(role="agent", content=f"act {i}"), Step(role="env", content=f"y{i} " * 40)]
    long = Trajectory(task="t", steps=steps)
    lm = DummyLM([{"rationale": "r", "verdict": "failure"}] * 2)
    dspy.configure(lm=lm)
    RationaleJudge(renderer=EvidenceRenderer(budget_tokens=600))(task="t", trajectory=long)
    assert NOT_SHOWN_RULE in system(lm)
    assert "NOT SHOWN, to fit the budget" in prompt(lm) and "act 79" in prompt(lm)
    RationaleJudge(renderer=None)(task="t", trajectory=long)  # the rendering and prompt from before
    assert NOT_SHOWN_RULE not in system(lm) and "characters of the middle omitted" in prompt(lm)


def test_a_token_budget_is_a_renderer():
    judge = Judge(renderer=900)
    assert judge.renderer == EvidenceRenderer(budget_tokens=900)


# ---- checklist ------------------------------------------------------------------------------


def check(requirement, met, evidence="[2] The water boils."):
    return {"requirement": requirement, "evidence": evidence, "met": met}


def test_checklist_success_only_when_every_requirement_is_met():
    lm = DummyLM([{"requirements": [check("the water boils", True), check("the stove is on", True)]}])
    dspy.configure(lm=lm)
    pred = ChecklistJudge()(task="boil water", trajectory=TRAJ)
    assert pred.verdict.label == "success" and len(pred.checks) == 2
    assert pred.verdict.rationale.startswith("met: the water boils ([2] The water boils.)")
    assert "recipe" in system(lm) and NOT_SHOWN_RULE.split(";")[0] in " ".join(system(lm).split())


def test_checklist_one_unmet_requirement_is_a_failure():
    dspy.configure(lm=DummyLM([{"requirements": [check("the water boils", True), check("pour it", False, "")]}]))
    pred = ChecklistJudge()(task="boil water", trajectory=TRAJ)
    assert pred.verdict.label == "failure" and "NOT met: pour it" in pred.verdict.rationale


def test_checklist_with_no_requirements_is_indeterminate_async():
    dspy.configure(lm=DummyLM([{"requirements": []}]))
    pred = asyncio.run(ChecklistJudge().acall(task="boil water", trajectory=TRAJ))
    assert pred.verdict.label == "indeterminate" and "no requirements" in pred.verdict.rationale


# ---- self-consistency ---------------------------------------------------------------------


def answers(*labels):
    return [{"rationale": f"because {label}", "verdict": label} for label in labels]


def test_self_consistency_stops_once_the_majority_is_certain():
    lm = DummyLM(answers("success", "success", "failure"))
    dspy.configure(lm=lm)
    pred = SelfConsistencyJudge(samples=3)(task="t", trajectory=TRAJ)
    assert pred.verdict.label == "success" and pred.votes == {"success": 2}
    assert len(lm.history) == 2 and pred.verdict.rationale.startswith("2 of 3 samples: success. because success")


def test_self_consistency_takes_the_majority_of_all_samples():
    lm = DummyLM(answers("success", "failure", "failure"))
    dspy.configure(lm=lm)
    pred = SelfConsistencyJudge(samples=3)(task="t", trajectory=TRAJ)
    assert pred.verdict.label == "failure" and len(lm.history) == 3


def test_self_consistency_split_is_indeterminate_async():
    lm = DummyLM([*answers("success", "failure"), {"verdict": "maybe", "rationale": "?"}])
    dspy.configure(lm=lm)
    pred = asyncio.run(SelfConsistencyJudge(samples=3).acall(task="t", trajectory=TRAJ))
    assert pred.verdict.label == "indeterminate" and "split (1 success, 1 failure, 1 indeterminate of 3)" in (
        pred.verdict.rationale
    )


def test_self_consistency_samples_carry_their_own_rollout_id_and_temperature():
    lm = DummyLM(answers("success", "failure", "failure", "failure", "failure"))
    dspy.configure(lm=lm)
    SelfConsistencyJudge(samples=5, temperature=0.9)(task="t", trajectory=TRAJ)
    sent = [(entry["kwargs"].get("rollout_id"), entry["kwargs"].get("temperature")) for entry in lm.history]
    assert sent == [(None, None), (1, 0.9), (2, 0.9), (3, 0.9), (4, 0.9)]


class FakeServer:
    """A llama.cpp server stand-in: a judge verdict per call, alternating."""

    def __init__(self, labels):
        self.labels, self.bodies = list(labels), []

    def handle_chat_completions(self, body):
        self.bodies.append(json.loads(json.dumps(body)))
        label = self.labels[(len(self.bodies) - 1) % len(self.labels)]
        text = f"[[ ## rationale ## ]]\nr\n\n[[ ## verdict ## ]]\n{label}\n\n[[ ## completed ## ]]"
        return {
            "id": "x",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }


def test_self_consistency_samples_are_not_served_from_the_cache_and_reach_the_engine_sampled():
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=True)
    server = FakeServer(["success", "failure", "failure"])
    engine = LlamaEngine("local-fast", server=server)
    lm = dspy.LM(
        "local/fake",
        engine=engine,
        async_engine=AsyncLlamaEngine(engine),
        callbacks=[RolloutSeedCallback()],
        cache=True,
    )
    dspy.configure(lm=lm)
    pred = SelfConsistencyJudge(samples=3)(task="t", trajectory=TRAJ)
    assert pred.verdict.label == "failure" and len(server.bodies) == 3
    assert [b["temperature"] for b in server.bodies] == [0.0, 0.7, 0.7]
    assert len({b["seed"] for b in server.bodies[1:]}) == 2


def test_majority_verdict_counts_indeterminate_samples_against_both_labels():
    s, f, i = Verdict(label="success"), Verdict(label="failure"), Verdict(label="indeterminate")
    assert majority_verdict([s, s, i], 3).label == "success"
    assert majority_verdict([s, i, i], 3).label == "indeterminate"
    assert majority_verdict([s, s, f, f], 4).label == "indeterminate"


# ---- confidence ---------------------------------------------------------------------------


def test_confidence_above_the_threshold_keeps_the_verdict():
    lm = DummyLM([{"rationale": "boiling observed", "verdict": "success", "confidence": "0.9"}])
    dspy.configure(lm=lm)
    pred = ConfidenceJudge(threshold=0.7)(task="t", trajectory=TRAJ)
    assert pred.verdict.label == "success" and pred.confidence == 0.9 and pred.label == "success"
    assert "confidence" in system(lm)


def test_confidence_below_the_threshold_is_indeterminate_and_says_why():
    dspy.configure(lm=DummyLM([{"rationale": "unclear", "verdict": "failure", "confidence": "0.55"}]))
    pred = ConfidenceJudge(threshold=0.7)(task="t", trajectory=TRAJ)
    assert pred.verdict.label == "indeterminate" and pred.label == "failure" and pred.confidence == 0.55
    assert "0.55 is below the threshold 0.70" in pred.verdict.rationale


def test_confidence_as_a_percentage_is_scaled_async():
    dspy.configure(lm=DummyLM([{"rationale": "r", "verdict": "failure", "confidence": "85"}]))
    pred = asyncio.run(ConfidenceJudge().acall(task="t", trajectory=TRAJ))
    assert pred.verdict.label == "failure" and pred.confidence == 0.85


@pytest.mark.parametrize("confidence", ["-0.2", "250", "nan"])
def test_an_unusable_confidence_is_indeterminate(confidence):
    dspy.configure(lm=DummyLM([{"rationale": "r", "verdict": "success", "confidence": confidence}] * 3))
    pred = ConfidenceJudge()(task="t", trajectory=TRAJ)
    assert pred.verdict.label == "indeterminate"


def test_a_design_saves_and_loads_its_own_prompt(tmp_path):
    judge = ChecklistJudge()
    judge.checklist.signature = judge.checklist.signature.with_instructions("Check carefully.")
    judge.save(str(tmp_path / "judge.json"))
    loaded = ChecklistJudge()
    loaded.load(str(tmp_path / "judge.json"))
    assert loaded.checklist.signature.instructions == "Check carefully."
