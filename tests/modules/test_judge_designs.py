"""The opt-in judge designs (checklist, self-consistency, confidence) and the renderer option, on
scripted LMs: each gives a verdict when the LM behaves and `indeterminate` when it does not."""

from __future__ import annotations

import asyncio
import json

import dspy
import pytest
from dspy.utils import DummyLM

from rbdspy.lm.local_engine import AsyncLlamaEngine, LlamaEngine, RolloutSeedCallback
from rbdspy.modules.final_goal import LAST_OBSERVATION_CHARS, grounded_observation, last_steps, last_window
from rbdspy.modules.judge import JUDGE_DESIGNS, Judge, majority_verdict
from rbdspy.modules.lm_errors import LMSetupError
from rbdspy.render import NOT_SHOWN_RULE, EvidenceRenderer
from rbdspy.types import Step, Trajectory, Verdict

TRAJ = Trajectory(
    task="boil water",
    steps=[
        Step(role="env", content="A kitchen with a stove and a pot of water."),
        Step(role="agent", content="activate stove"),
        Step(role="env", content="The water boils."),
    ],
)


def prompt(lm) -> str:
    return lm.history[-1]["messages"][-1]["content"]


def system(lm) -> str:
    return lm.history[-1]["messages"][0]["content"]


# ---- design selection ----------------------------------------------------------------------


def test_the_default_design_is_todays_and_each_design_has_its_own_predictor():
    assert Judge().design == "rationale" and Judge().renderer is None
    names = {design: [n for n, _ in Judge(design=design).named_predictors()] for design in JUDGE_DESIGNS}
    assert names == {
        "rationale": ["predict"],
        "checklist": ["checklist"],
        "self-consistency": ["predict"],
        "confidence": ["confident"],
        "final-goal": ["final_goal", "verify_goal"],
        "probability": ["last_steps_verdict"],
    }


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="design must be one of"):
        Judge(design="vibes")
    with pytest.raises(ValueError, match="samples"):
        Judge(design="self-consistency", samples=0)
    with pytest.raises(ValueError, match="threshold"):
        Judge(design="confidence", threshold=1.5)


@pytest.mark.parametrize("design", JUDGE_DESIGNS)
def test_no_lm_is_a_setup_error_in_every_design(design):
    with pytest.raises(LMSetupError):
        Judge(design=design)(task="t", trajectory=TRAJ)


@pytest.mark.parametrize("design", JUDGE_DESIGNS)
def test_an_lm_that_raises_gives_indeterminate_in_every_design(design):
    class Broken(dspy.Module):
        def forward(self, **kw):
            raise RuntimeError("server down")

    judge = Judge(design=design)
    for name, _ in judge.named_predictors():
        setattr(judge, name, Broken())
    verdict = judge(task="t", trajectory=TRAJ).verdict
    assert verdict.label == "indeterminate"


@pytest.mark.parametrize("design", JUDGE_DESIGNS)
def test_garbage_gives_indeterminate_in_every_design(design):
    dspy.configure(lm=DummyLM([{"nonsense": "no fields"}] * 12))
    assert Judge(design=design)(task="t", trajectory=TRAJ).verdict.label == "indeterminate"


# ---- the renderer option -------------------------------------------------------------------


def test_a_renderer_shows_the_evidence_and_adds_the_not_shown_rule():
    steps = [Step(role="env", content="start")]
    for i in range(80):
        steps += [Step(role="agent", content=f"act {i}"), Step(role="env", content=f"y{i} " * 40)]
    long = Trajectory(task="t", steps=steps)
    lm = DummyLM([{"rationale": "r", "verdict": "failure"}] * 2)
    dspy.configure(lm=lm)
    Judge(renderer=EvidenceRenderer(budget_tokens=600))(task="t", trajectory=long)
    assert NOT_SHOWN_RULE in system(lm)
    assert "NOT SHOWN, to fit the budget" in prompt(lm) and "act 79" in prompt(lm)
    Judge()(task="t", trajectory=long)  # the default: today's rendering and prompt
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
    pred = Judge(design="checklist")(task="boil water", trajectory=TRAJ)
    assert pred.verdict.label == "success" and len(pred.checks) == 2
    assert pred.verdict.rationale.startswith("met: the water boils ([2] The water boils.)")
    assert "recipe" in system(lm) and NOT_SHOWN_RULE.split(";")[0] in " ".join(system(lm).split())


def test_checklist_one_unmet_requirement_is_a_failure():
    dspy.configure(lm=DummyLM([{"requirements": [check("the water boils", True), check("pour it", False, "")]}]))
    pred = Judge(design="checklist")(task="boil water", trajectory=TRAJ)
    assert pred.verdict.label == "failure" and "NOT met: pour it" in pred.verdict.rationale


def test_checklist_with_no_requirements_is_indeterminate_async():
    dspy.configure(lm=DummyLM([{"requirements": []}]))
    pred = asyncio.run(Judge(design="checklist").acall(task="boil water", trajectory=TRAJ))
    assert pred.verdict.label == "indeterminate" and "no requirements" in pred.verdict.rationale


# ---- final goal -------------------------------------------------------------------------------


def final(reached, goal="the water boils", evidence="The water boils."):
    return {"final_goal": goal, "evidence": evidence, "final_goal_reached": reached}


def test_final_goal_success_when_the_quoted_observation_is_verified():
    lm = DummyLM([final("true"), {"reached": "true"}])
    dspy.configure(lm=lm)
    pred = Judge(design="final-goal")(task="boil water", trajectory=TRAJ)
    assert pred.verdict.label == "success" and pred.final_goal_reached is True
    assert pred.verdict.rationale == "final goal: the water boils; shown reached by: The water boils."
    # First call: the task and the last actions, numbered as in the trajectory; not the rest.
    first = lm.history[-2]["messages"][-1]["content"]
    assert "[[ ## last_steps ## ]]\n[1] agent: activate stove\n[2] env: The water boils." in first
    assert "A kitchen with a stove" not in first
    # Second call: the goal and the observation the quote stands for.
    assert "[[ ## goal ## ]]\nthe water boils" in prompt(lm) and "[[ ## observation ## ]]\nThe water boils." in prompt(
        lm
    )


def test_final_goal_not_reached_is_a_failure_in_one_call():
    lm = DummyLM([final("false", evidence="none")])
    dspy.configure(lm=lm)
    pred = Judge(design="final-goal")(task="boil water", trajectory=TRAJ)
    assert pred.verdict.label == "failure" and len(lm.history) == 1
    assert pred.verdict.rationale == "final goal: the water boils; not shown reached"


def test_final_goal_a_quote_the_verification_refuses_is_a_failure():
    dspy.configure(lm=DummyLM([final("true", evidence="activate stove"), {"reached": "false"}]))
    pred = Judge(design="final-goal")(task="boil water", trajectory=TRAJ)
    assert pred.verdict.label == "failure" and pred.final_goal_reached is False
    # The quote named the agent's action: the observation that answered it is what was checked.
    assert pred.verdict.rationale == "final goal: the water boils; not shown reached by: The water boils."


def test_final_goal_with_an_unreadable_answer_on_the_goal_is_indeterminate_async():
    dspy.configure(lm=DummyLM([final("maybe")] * 2))  # the chat adapter, then the JSON fallback
    pred = asyncio.run(Judge(design="final-goal").acall(task="boil water", trajectory=TRAJ))
    assert pred.verdict.label == "indeterminate" and pred.final_goal_reached is None


def test_final_goal_an_unreadable_verification_is_indeterminate():
    dspy.configure(lm=DummyLM([final("true"), {"reached": "perhaps"}, {"reached": "perhaps"}]))
    pred = Judge(design="final-goal")(task="boil water", trajectory=TRAJ)
    assert pred.verdict.label == "indeterminate"


def test_a_quote_is_grounded_in_the_observation_that_answered_it():
    steps = [
        Step(role="env", content="You are in a kitchen."),
        Step(role="agent", content="open fridge"),
        Step(role="env", content="The fridge is open. It holds a carrot."),
        Step(role="agent", content="take carrot"),
        Step(role="env", content="You take the carrot."),
    ]
    window = last_window(Trajectory(task="t", steps=steps))
    assert grounded_observation(window, "You take the carrot") == "You take the carrot."
    assert grounded_observation(window, "take carrot") == "You take the carrot."  # an action: its answer
    assert grounded_observation(window, "open fridge") == "The fridge is open. It holds a carrot."
    assert grounded_observation(window, "xyzzy") == "You take the carrot."  # nothing matches: the last one
    assert grounded_observation(window[:1], "open fridge") is None  # no observation to stand for


def test_last_steps_shows_the_last_actions_whole_up_to_a_cap_and_says_when_nothing_answered():
    steps = [Step(role="env", content="start")]
    for i in range(6):
        steps += [Step(role="agent", content=f"act {i}"), Step(role="env", content=f"seen {i}")]
    steps += [Step(role="env", content="room " * 400), Step(role="agent", content="wait")]
    text = last_steps(Trajectory(task="t", steps=steps))
    lines = text.splitlines()
    assert lines[0] == "[9] agent: act 4" and "act 3" not in text  # the last three actions only
    assert lines[4].startswith("[13] env: room room") and lines[4].endswith(" ...")
    assert len(lines[4]) < len("[13] env: ") + LAST_OBSERVATION_CHARS + 10
    assert lines[-2:] == ["[14] agent: wait", "(no observation after the last action)"]
    assert last_steps(Trajectory(task="t", steps=[Step(role="env", content="x")])) == "(the agent took no action)"


def test_final_goal_on_a_trajectory_given_as_text_reads_its_end():
    lm = DummyLM([final("true"), {"reached": "true"}] * 2)
    dspy.configure(lm=lm)
    Judge(design="final-goal")(task="t", trajectory="[0] env: done")
    first = lm.history[-2]["messages"][-1]["content"]
    assert "[[ ## last_steps ## ]]\n[0] env: done" in first
    assert "[[ ## observation ## ]]\nThe water boils." in prompt(lm)  # the quote itself: no steps to ground it in
    Judge(design="final-goal")(task="t", trajectory="[0] env: " + "x" * 5000 + " the end")
    first = lm.history[-2]["messages"][-1]["content"]
    assert "[[ ## last_steps ## ]]\n...xxx" in first and "x" * 1900 not in first


# ---- self-consistency ---------------------------------------------------------------------


def answers(*labels):
    return [{"rationale": f"because {label}", "verdict": label} for label in labels]


def test_self_consistency_stops_once_the_majority_is_certain():
    lm = DummyLM(answers("success", "success", "failure"))
    dspy.configure(lm=lm)
    pred = Judge(design="self-consistency", samples=3)(task="t", trajectory=TRAJ)
    assert pred.verdict.label == "success" and pred.votes == {"success": 2}
    assert len(lm.history) == 2 and pred.verdict.rationale.startswith("2 of 3 samples: success. because success")


def test_self_consistency_takes_the_majority_of_all_samples():
    lm = DummyLM(answers("success", "failure", "failure"))
    dspy.configure(lm=lm)
    pred = Judge(design="self-consistency", samples=3)(task="t", trajectory=TRAJ)
    assert pred.verdict.label == "failure" and len(lm.history) == 3


def test_self_consistency_split_is_indeterminate_async():
    lm = DummyLM([*answers("success", "failure"), {"verdict": "maybe", "rationale": "?"}])
    dspy.configure(lm=lm)
    pred = asyncio.run(Judge(design="self-consistency", samples=3).acall(task="t", trajectory=TRAJ))
    assert pred.verdict.label == "indeterminate" and "split (1 success, 1 failure, 1 indeterminate of 3)" in (
        pred.verdict.rationale
    )


def test_self_consistency_samples_carry_their_own_rollout_id_and_temperature():
    lm = DummyLM(answers("success", "failure", "failure", "failure", "failure"))
    dspy.configure(lm=lm)
    Judge(design="self-consistency", samples=5, temperature=0.9)(task="t", trajectory=TRAJ)
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
    pred = Judge(design="self-consistency", samples=3)(task="t", trajectory=TRAJ)
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
    pred = Judge(design="confidence", threshold=0.7)(task="t", trajectory=TRAJ)
    assert pred.verdict.label == "success" and pred.confidence == 0.9 and pred.label == "success"
    assert "confidence" in system(lm)


def test_confidence_below_the_threshold_is_indeterminate_and_says_why():
    dspy.configure(lm=DummyLM([{"rationale": "unclear", "verdict": "failure", "confidence": "0.55"}]))
    pred = Judge(design="confidence", threshold=0.7)(task="t", trajectory=TRAJ)
    assert pred.verdict.label == "indeterminate" and pred.label == "failure" and pred.confidence == 0.55
    assert "0.55 is below the threshold 0.70" in pred.verdict.rationale


def test_confidence_as_a_percentage_is_scaled_async():
    dspy.configure(lm=DummyLM([{"rationale": "r", "verdict": "failure", "confidence": "85"}]))
    pred = asyncio.run(Judge(design="confidence").acall(task="t", trajectory=TRAJ))
    assert pred.verdict.label == "failure" and pred.confidence == 0.85


@pytest.mark.parametrize("confidence", ["-0.2", "250", "nan"])
def test_an_unusable_confidence_is_indeterminate(confidence):
    dspy.configure(lm=DummyLM([{"rationale": "r", "verdict": "success", "confidence": confidence}] * 3))
    pred = Judge(design="confidence")(task="t", trajectory=TRAJ)
    assert pred.verdict.label == "indeterminate"


def test_a_design_saves_and_loads_its_own_prompt(tmp_path):
    judge = Judge(design="checklist")
    judge.checklist.signature = judge.checklist.signature.with_instructions("Check carefully.")
    judge.save(str(tmp_path / "judge.json"))
    loaded = Judge(design="checklist")
    loaded.load(str(tmp_path / "judge.json"))
    assert loaded.checklist.signature.instructions == "Check carefully."
