"""The probability judge design: P(success) read from the verdict token's logprobs (an engine over
a fake llama.cpp server supplies them), thresholded with an abstention band; an LM without
logprobs falls back to the written word; anything unusable is indeterminate."""

from __future__ import annotations

import asyncio
import math

import dspy
import pytest
from dspy.utils import DummyLM
from judge_testing import entry, verdict_reply

from rbdspy.core.logprobs import label_probability
from rbdspy.judge import ProbabilityJudge
from rbdspy.judge.probability import LABELS, lm_calls, log_odds
from rbdspy.lm.local_engine import AsyncLlamaEngine, LlamaEngine
from rbdspy.types import Step, Trajectory

TRAJ = Trajectory(
    task="boil water",
    steps=[
        Step(role="user", content="boil water"),
        Step(role="env", content="A kitchen with a stove and an empty pot."),
        Step(role="agent", content="fill pot"),
        Step(role="env", content="The pot is full of water."),
        Step(role="agent", content="activate stove"),
        Step(role="env", content="The water boils."),
    ],
)


class ViewServer:
    """Answers each question with its P(success): the whole trajectory, the action list, the last
    steps from the first action on (the windows of three and six actions, the same here), the
    last action alone, or the last steps as they stood one action earlier (which do not yet show
    the water boiling)."""

    def __init__(self, p_last, p_before=0.5, p_trajectory=0.5, p_action=None, p_actions=None):
        self.p = {"trajectory": p_trajectory, "last-steps": p_last, "before-last": p_before}
        self.p |= {"last-action": p_last if p_action is None else p_action}
        self.p |= {"actions": p_last if p_actions is None else p_actions}
        self.bodies = []

    def handle_chat_completions(self, body):
        self.bodies.append(body)
        text = body["messages"][-1]["content"]
        if "[[ ## actions ## ]]" in text:
            return verdict_reply(self.p["actions"])
        if "[[ ## last_steps ## ]]" not in text:
            return verdict_reply(self.p["trajectory"])
        if "The water boils." not in text:
            return verdict_reply(self.p["before-last"])
        return verdict_reply(self.p["last-steps" if "fill pot" in text else "last-action"])


def configure(p_last, p_before=0.5, p_trajectory=0.5, p_action=None, p_actions=None):
    server = ViewServer(p_last, p_before, p_trajectory, p_action, p_actions)
    engine = LlamaEngine("local-fast", server=server)
    lm = dspy.LM("local/fake", engine=engine, async_engine=AsyncLlamaEngine(engine))
    dspy.configure(lm=lm, adapter=dspy.JSONAdapter())
    return server


def sigmoid(x):
    return 1 / (1 + math.exp(-x))


def asked(server):
    return [body["messages"][-1]["content"] for body in server.bodies]


def test_the_default_score_is_the_mean_log_odds_of_the_windows_and_the_action_list():
    server = configure(p_last=0.6, p_action=0.9, p_actions=0.2)
    pred = ProbabilityJudge()(task="boil water", trajectory=TRAJ)
    expected = sigmoid((2 * log_odds(0.6) + log_odds(0.9) + log_odds(0.2)) / 4)
    assert pred.probability == pytest.approx(expected, abs=1e-3)
    assert pred.probabilities == pytest.approx(
        {"recent-steps": 0.6, "last-steps": 0.6, "last-action": 0.9, "actions": 0.2}, abs=1e-3
    )
    assert pred.verdict.label == "success" and pred.verdict.rationale.startswith(f"P(success) {expected:.2f}")
    # Two actions: the windows of six and of three show the same steps, asked once.
    assert all(body["logprobs"] is True for body in server.bodies) and len(server.bodies) == 3
    texts = asked(server)
    assert any("[2] agent: fill pot\n[3] env: The pot is full of water.\n[4] agent: activate stove" in t for t in texts)
    assert any("[4] agent: activate stove\n[5] env: The water boils." in t and "fill pot" not in t for t in texts)
    assert any("1. fill pot\n2. activate stove\nlast answer: The water boils." in t for t in texts)
    names = [n for n, _ in ProbabilityJudge().named_predictors()]
    assert names == ["last_steps_verdict", "actions_verdict"]


def test_one_low_question_pulls_the_verdict_down():
    configure(p_last=0.6, p_action=0.9, p_actions=0.6)
    agreed = ProbabilityJudge(band=(0.5, 0.5))(task="boil water", trajectory=TRAJ)
    configure(p_last=0.6, p_action=0.9, p_actions=0.01)  # the action list shows the task not done
    doubted = ProbabilityJudge(band=(0.5, 0.5))(task="boil water", trajectory=TRAJ)
    assert agreed.verdict.label == "success" and doubted.verdict.label == "failure"


def test_the_progress_view_compares_the_last_steps_with_one_action_earlier():
    server = configure(p_last=0.6, p_before=0.3)
    pred = ProbabilityJudge(views=("last-steps", "progress"))(task="boil water", trajectory=TRAJ)
    expected = sigmoid((log_odds(0.6) + (log_odds(0.6) - log_odds(0.3))) / 2)
    assert pred.probability == pytest.approx(expected, abs=1e-3)
    assert pred.probabilities == pytest.approx({"last-steps": 0.6, "before-last": 0.3}, abs=1e-3)
    assert len(server.bodies) == 2
    earlier = "[2] agent: fill pot\n[3] env: The pot is full of water.\n\n"
    assert any(earlier in t and "boils" not in t for t in asked(server))
    configure(p_last=0.6, p_before=0.6)
    flat = ProbabilityJudge(views=("last-steps", "progress"))(task="boil water", trajectory=TRAJ)
    assert flat.probability < pred.probability  # the last action changed nothing: a lower score


def test_a_single_action_is_one_window_and_has_nothing_before_it_to_compare_with():
    server = configure(p_last=0.2, p_before=0.7)  # no "boils" in these last steps: answered 0.7
    one = Trajectory(task="t", steps=[Step(role="user", content="t"), Step(role="assistant", content="answer: 4")])
    pred = ProbabilityJudge()(task="t", trajectory=one)
    assert pred.probabilities == pytest.approx({"recent-steps": 0.7, "last-steps": 0.7, "last-action": 0.7}, abs=1e-3)
    assert len(server.bodies) == 1  # the one window is the whole list of actions too
    server = configure(p_last=0.2, p_before=0.7)
    pred = ProbabilityJudge(views=("last-steps", "progress"))(task="t", trajectory=one)
    assert pred.probabilities == pytest.approx({"last-steps": 0.7}, abs=1e-3) and len(server.bodies) == 1


def test_the_threshold_decides_and_the_band_abstains():
    configure(p_last=0.3, p_before=0.3)  # score 0.3
    assert ProbabilityJudge(band=(0.25, 0.25))(task="t", trajectory=TRAJ).verdict.label == "success"
    assert ProbabilityJudge(band=(0.35, 0.35))(task="t", trajectory=TRAJ).verdict.label == "failure"
    pred = ProbabilityJudge(band=(0.2, 0.4))(task="t", trajectory=TRAJ)
    assert pred.verdict.label == "indeterminate" and "abstention band [0.20, 0.40)" in pred.verdict.rationale


def test_the_trajectory_view_alone_asks_one_question_async():
    server = configure(p_last=0.9, p_trajectory=0.1)
    pred = asyncio.run(ProbabilityJudge(views=("trajectory",)).acall(task="t", trajectory=TRAJ))
    assert pred.verdict.label == "failure" and pred.probabilities == pytest.approx({"trajectory": 0.1}, abs=1e-3)
    assert len(server.bodies) == 1
    names = [n for n, _ in ProbabilityJudge(views=("trajectory",)).named_predictors()]
    assert names == ["trajectory_verdict"]


def test_a_trajectory_given_as_text_is_asked_about_its_tail_once():
    server = configure(p_last=0.7)
    pred = ProbabilityJudge()(task="t", trajectory="[0] env: The water boils.")
    assert pred.probabilities == pytest.approx({"last-steps": 0.7}, abs=1e-3) and len(server.bodies) == 1
    assert pred.probability == pytest.approx(0.7, abs=1e-3)


def test_an_lm_without_logprobs_counts_its_written_word():
    # Asked in order: the window of six actions (the same as three here), the last action, the list.
    dspy.configure(lm=DummyLM([{"verdict": "success"}, {"verdict": "success"}, {"verdict": "failure"}]))
    pred = ProbabilityJudge()(task="t", trajectory=TRAJ)
    assert pred.probabilities == {"recent-steps": 1.0, "last-steps": 1.0, "last-action": 1.0, "actions": 0.0}
    assert pred.verdict.label == "success"  # three of four terms at 1.0 outweigh one at 0.0


def test_garbage_is_indeterminate():
    dspy.configure(lm=DummyLM([{"verdict": "maybe"}] * 4))
    assert ProbabilityJudge()(task="t", trajectory=TRAJ).verdict.label == "indeterminate"


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="views"):
        ProbabilityJudge(views=("vibes",))
    with pytest.raises(ValueError, match="band"):
        ProbabilityJudge(band=(0.6, 0.4))


def test_label_probability_reads_the_first_label_token():
    tokens = [entry('{"', 1.0, [("x", 0.1)]), entry("fail", 0.7, [("fail", 0.7), ("succ", 0.2), ("f", 0.05)])]
    assert label_probability({"content": tokens}, LABELS) == pytest.approx(0.2 / 0.9)
    # The chosen token counts even when the alternatives leave it out; the other label may be missing.
    assert label_probability([entry(" success", 0.9, [])], LABELS) == pytest.approx(1.0)
    assert label_probability({"content": [entry("maybe", 1.0)]}, LABELS) is None
    assert label_probability(None, LABELS) is None


def test_an_lm_whose_provider_has_no_logprobs_is_not_asked_for_them():
    class NoLogprobs(DummyLM):
        supported_params = {"temperature", "max_tokens"}

        def __call__(self, *args, **kwargs):
            assert "logprobs" not in kwargs and "top_logprobs" not in kwargs
            return super().__call__(*args, **kwargs)

    dspy.configure(lm=NoLogprobs([{"verdict": "success"}, {"verdict": "success"}, {"verdict": "failure"}]))
    assert ProbabilityJudge()(task="t", trajectory=TRAJ).verdict.label == "success"


def test_lm_calls_counts_each_distinct_prompt_once():
    def acting(n):
        steps = [Step(role="env", content="start")]
        for i in range(n):
            steps += [Step(role="agent", content=f"act {i}"), Step(role="env", content=f"seen {i}")]
        return Trajectory(task="t", steps=steps)

    # one action: one window; two or three: the windows of three and six are one prompt; seven: four
    assert [lm_calls(acting(n)) for n in (1, 2, 3, 4, 7)] == [1, 3, 3, 4, 4]
    assert lm_calls(acting(7), ("last-steps", "progress")) == 2 and lm_calls("[0] env: text") == 1
    server = configure(p_last=0.6)
    ProbabilityJudge()(task="t", trajectory=acting(7))
    assert len(server.bodies) == lm_calls(acting(7))
