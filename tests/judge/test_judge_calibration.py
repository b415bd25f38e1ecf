"""Calibrating the probability judge's band on labelled trajectories: the band found on separable
scores, the false-success cap respected, the band saved and loaded with the judge and with a
bank, the warning when another LM loads it, and the designs that have nothing to calibrate."""

from __future__ import annotations

import json
import warnings

import dspy
import numpy as np
import pytest
from judge_testing import signal_lm

import rbdspy
from rbdspy.datasets.dataset import LabelledTrajectory, write_records
from rbdspy.judge import Judge, judge_for
from rbdspy.judge.calibration import Calibration, CalibrationWarning, choose_band
from rbdspy.judge.probability_judge import DEFAULT_PROBABILITY_BAND
from rbdspy.optimizers.calibrate import calibrate_judge
from rbdspy.types import Step, Trajectory


def game(signal: int, outcome: bool | None = None) -> Trajectory:
    task = f"boil water (signal {signal})"
    steps = [Step(role="user", content=task), Step(role="env", content="A kitchen.")]
    for action in ("fill pot", "activate stove"):
        steps += [Step(role="agent", content=action), Step(role="env", content="Done.")]
    return Trajectory(task=task, steps=steps, final_answer="score 1/1", outcome=outcome)


def record(signal: int, label: str) -> dict:
    return {"trajectory": game(signal).model_dump(mode="json"), "label": label}


def labelled_record(signal: int, label: str) -> LabelledTrajectory:
    """A dataset record, as `rbdspy calibrate --from` reads them."""
    return LabelledTrajectory(
        trajectory=game(signal), label=label, kind="agent", env="fake", task_id=f"fake/{signal}", split="train"
    )


# ---- choosing the band ---------------------------------------------------------------------


def test_separable_scores_get_a_threshold_between_the_two_groups():
    scores = [0.05, 0.1, 0.2, 0.3, 0.6, 0.7, 0.8, 0.9]
    labels = [False] * 4 + [True] * 4
    calibration = choose_band(scores, labels)
    low, high = calibration.band
    assert low == high and 0.3 < high <= 0.6
    assert calibration.balanced_accuracy == 1.0 and calibration.false_success_rate == 0.0
    assert calibration.interval == (1.0, 1.0) and (calibration.n_success, calibration.n_failure) == (4, 4)


def test_the_band_moves_with_the_scores_not_a_fixed_threshold():
    """The same separation at another height (a family whose probabilities sit higher) gets a
    band at that height."""
    low_family = choose_band([0.05, 0.1, 0.15, 0.25, 0.3, 0.35], [False] * 3 + [True] * 3).band[1]
    high_family = choose_band([0.6, 0.65, 0.7, 0.85, 0.9, 0.95], [False] * 3 + [True] * 3).band[1]
    assert 0.15 < low_family < 0.25 and 0.7 < high_family < 0.85


def test_the_false_success_cap_is_respected_at_the_cost_of_false_failures():
    """A failure scoring among the successes: the best balanced accuracy would call it a success;
    with the cap at 0 the band goes above it, giving up the successes below it."""
    scores = [0.1, 0.2, 0.3, 0.75, 0.5, 0.6, 0.8, 0.9]
    labels = [False, False, False, False, True, True, True, True]
    loose = choose_band(scores, labels, max_false_success=0.5, bootstrap=0)
    strict = choose_band(scores, labels, max_false_success=0.0, bootstrap=0)
    assert loose.band[1] < 0.5 and loose.false_success_rate == 0.25
    assert 0.75 < strict.band[1] < 0.8 and strict.false_success_rate == 0.0
    assert strict.balanced_accuracy == pytest.approx((0.5 + 1.0) / 2)


def test_the_bootstrap_checks_the_cap_beyond_the_examples_at_hand():
    """Ten failures, one of them among the successes: on the examples a threshold below it keeps
    the cap (1 of 10), but on many resamples that failure is drawn twice or more and breaks it,
    so the bootstrapped band goes above it; the interval is reported around the band's accuracy."""
    rng = np.random.default_rng(0)
    failures = list(rng.uniform(0.05, 0.3, 9)) + [0.62]
    successes = list(rng.uniform(0.5, 0.95, 10))
    labels = [False] * 10 + [True] * 10
    plain = choose_band(failures + successes, labels, bootstrap=0)
    resampled = choose_band(failures + successes, labels, bootstrap=500, confidence=0.8)
    assert plain.band[1] < 0.62 < resampled.band[1]
    lo, hi = resampled.interval
    assert lo <= resampled.balanced_accuracy <= hi and lo < hi


def test_a_failure_scored_certain_gets_the_highest_band_there_is():
    calibration = choose_band([0.2, 1.0, 0.9, 1.0], [False, False, True, True], bootstrap=0)
    assert calibration.band == (1.0, 1.0) and calibration.false_success_rate == 0.5


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="at least one success and one failure"):
        choose_band([0.2, 0.4], [True, True])
    with pytest.raises(ValueError, match="3 scores but 2 labels"):
        choose_band([0.2, 0.4, 0.5], [True, False])
    with pytest.raises(ValueError, match="probabilities within"):
        choose_band([0.2, 1.4], [True, False])
    with pytest.raises(ValueError, match="label 1 is 'maybe'"):
        choose_band([0.2, 0.4], [True, "maybe"])
    with pytest.raises(ValueError, match="max_false_success"):
        choose_band([0.2, 0.4], [True, False], max_false_success=2)


# ---- Judge.calibrate ---------------------------------------------------------------------


def test_calibrate_judges_each_example_once_and_uses_the_band():
    lm, server = signal_lm("local/model-a")
    dspy.configure(lm=lm, adapter=dspy.JSONAdapter())
    judge = Judge()
    examples = [record(s, "failure") for s in (10, 20, 30)] + [record(s, "success") for s in (60, 70, 80)]
    before = server.calls
    calibration = judge.calibrate(examples)
    assert server.calls - before == 6 * 3  # two actions: three distinct questions per trajectory, asked once
    assert judge.calibration == calibration and judge.band == calibration.band
    assert 0.3 < judge.band[1] < 0.6 and calibration.lm == "local/model-a"
    assert calibration.views == judge.views
    assert judge(task=game(40).task, trajectory=game(40)).verdict.label == "failure"
    assert judge(task=game(65).task, trajectory=game(65)).verdict.label == "success"


def test_calibrate_takes_trajectories_with_outcomes_and_hides_a_records_final_answer():
    lm, _ = signal_lm()
    dspy.configure(lm=lm, adapter=dspy.JSONAdapter())
    calibration = Judge().calibrate([game(15, False), game(25, False), game(75, True), game(85, True)])
    assert calibration.n == 4 and 0.25 < calibration.band[1] < 0.75


def test_an_example_the_judge_cannot_score_is_left_out_and_counted():
    lm, _ = signal_lm()
    dspy.configure(lm=lm, adapter=dspy.JSONAdapter())
    judge = Judge()
    original = judge.forward

    def flaky(task, trajectory):
        if "signal 50" in task:
            return dspy.Prediction(
                verdict=rbdspy.Verdict(label="indeterminate", rationale="LM error"), probability=None
            )
        return original(task, trajectory)

    judge.forward = flaky
    calibration = judge.calibrate([game(10, False), game(50, False), game(20, False), game(80, True)])
    assert calibration.n_unscored == 1 and calibration.n == 3


def test_bad_examples_are_named():
    judge = Judge()
    with pytest.raises(ValueError, match="example 0: a Trajectory needs its outcome"):
        judge.calibrate([game(10)])
    with pytest.raises(ValueError, match=r"example 1 \(str\): give a labelled record"):
        judge.calibrate([record(10, "failure"), "not a record"])
    with pytest.raises(ValueError, match="label 0 is 'won'"):
        judge.calibrate([record(10, "won")])


@pytest.mark.parametrize("design", ["rationale", "checklist", "self-consistency", "confidence"])
def test_designs_without_a_probability_have_nothing_to_calibrate(design, tmp_path):
    """Their classes have no calibrate; calibrating one by its design's name says why."""
    assert not hasattr(judge_for(design), "calibrate")
    data = tmp_path / "labelled.jsonl"
    write_records(data, [labelled_record(10, "failure"), labelled_record(90, "success")])
    with pytest.raises(ValueError, match=f"the {design} judge writes its verdict and has no probability"):
        calibrate_judge([data], design=design, lm=signal_lm()[0])


# ---- saved and loaded with the program ---------------------------------------------------


def calibrated(lm_name="local/model-a") -> Judge:
    lm, _ = signal_lm(lm_name)
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        judge = Judge()
        judge.calibrate([record(s, "failure") for s in (60, 65, 70)] + [record(s, "success") for s in (85, 90, 95)])
    return judge


def test_the_band_is_saved_and_loaded_with_the_judge(tmp_path):
    judge = calibrated()
    judge.save(str(tmp_path / "judge.json"))
    saved = json.loads((tmp_path / "judge.json").read_text())
    assert saved["band_state"]["calibration"]["lm"] == "local/model-a"
    fresh = Judge()
    assert fresh.band == DEFAULT_PROBABILITY_BAND and fresh.calibration is None
    fresh.load(str(tmp_path / "judge.json"))
    assert fresh.band == judge.band and fresh.calibration == judge.calibration
    assert 0.7 < fresh.band[1] < 0.85


def test_the_band_is_saved_and_loaded_with_a_bank(tmp_path, store):
    agent = dspy.Predict("task, memory -> answer")
    bank = rbdspy.ReasoningBank(agent, store, judge=calibrated(), compiled=None)
    bank.save(str(tmp_path / "bank.json"))
    assert "judge.band_state" in json.loads((tmp_path / "bank.json").read_text())
    reopened = rbdspy.ReasoningBank(agent, store, compiled=None)
    reopened.load(str(tmp_path / "bank.json"))
    assert reopened.judge.band == bank.judge.band and reopened.judge.calibration == bank.judge.calibration
    matts = rbdspy.MaTTS(reopened, k=2)
    matts.save(str(tmp_path / "matts.json"))
    again = rbdspy.MaTTS(rbdspy.ReasoningBank(agent, store, compiled=None), k=2)
    again.load(str(tmp_path / "matts.json"))
    assert again.bank.judge.calibration == bank.judge.calibration


def test_a_program_saved_before_bands_were_saved_loads_and_keeps_its_band(tmp_path, store):
    agent = dspy.Predict("task, memory -> answer")
    bank = rbdspy.ReasoningBank(agent, store, compiled=None)
    bank.save(str(tmp_path / "bank.json"))
    state = json.loads((tmp_path / "bank.json").read_text())
    del state["judge.band_state"]
    (tmp_path / "old.json").write_text(json.dumps(state))
    judge = calibrated()
    loaded = rbdspy.ReasoningBank(agent, store, judge=judge, compiled=None).load(str(tmp_path / "old.json"))
    assert loaded.judge.calibration == judge.calibration
    plain = Judge()
    judge_state = {k.removeprefix("judge."): v for k, v in state.items() if k.startswith("judge.")}
    judge_state["metadata"] = state["metadata"]
    (tmp_path / "old-judge.json").write_text(json.dumps(judge_state))
    plain.load(str(tmp_path / "old-judge.json"))
    assert plain.band == DEFAULT_PROBABILITY_BAND


def test_a_band_calibrated_for_another_lm_warns_once(tmp_path):
    calibrated("local/model-a").save(str(tmp_path / "judge.json"))
    other, _ = signal_lm("local/model-b")
    dspy.configure(lm=other, adapter=dspy.JSONAdapter())
    judge = Judge()
    with pytest.warns(CalibrationWarning, match="calibrated for local/model-a, but the LM in use is local/model-b"):
        judge.load(str(tmp_path / "judge.json"))
        judge(task=game(50).task, trajectory=game(50))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        judge(task=game(50).task, trajectory=game(50))  # warned once per loaded calibration
    same, _ = signal_lm("local/model-a")
    dspy.configure(lm=same)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fresh = Judge()
        fresh.load(str(tmp_path / "judge.json"))
        fresh(task=game(50).task, trajectory=game(50))


def test_a_calibration_for_other_questions_is_refused():
    calibration = calibrated().calibration
    judge = Judge(views=("last-action",))
    with pytest.raises(ValueError, match="made with the questions last-action, last-steps"):
        judge.use_calibration(calibration)


def test_a_corrupted_saved_calibration_is_named(tmp_path):
    judge = calibrated()
    judge.save(str(tmp_path / "judge.json"))
    state = json.loads((tmp_path / "judge.json").read_text())
    state["band_state"]["calibration"]["band"] = [0.9, 0.1]
    (tmp_path / "judge.json").write_text(json.dumps(state))
    with pytest.raises(ValueError, match="the saved calibration is not one rbdspy reads"):
        Judge().load(str(tmp_path / "judge.json"))


def test_calibration_model_round_trips_as_json():
    calibration = calibrated().calibration
    assert Calibration.model_validate_json(calibration.model_dump_json()) == calibration
    assert "calibrated for local/model-a" in calibration.summary()


def test_a_final_answer_the_agent_wrote_is_judged_and_any_other_is_hidden():
    """A dataset's final answer may carry the environment's score and is never shown; one the agent
    wrote (how it stopped, marked by `rbdspy data from-bench`) is what the loop's judge reads."""
    from rbdspy.judge.trajectory_text import AGENT_FINAL_ANSWER, as_judged

    lm, _ = signal_lm()
    dspy.configure(lm=lm, adapter=dspy.JSONAdapter())
    steps = [Step(role="env", content="A kitchen."), Step(role="agent", content="fill pot")]
    steps += [Step(role="env", content="Done."), Step(role="agent", content="wait"), Step(role="env", content="Ok.")]

    def labelled(signal, by_agent, label):
        metadata = {AGENT_FINAL_ANSWER: True} if by_agent else {}
        trajectory = Trajectory(task="boil water", steps=steps, final_answer=f"signal {signal}", metadata=metadata)
        return {"trajectory": trajectory, "label": label}

    assert as_judged(labelled(80, False, "success")["trajectory"]).final_answer is None
    assert as_judged(labelled(80, True, "success")["trajectory"]).final_answer == "signal 80"
    shown = Judge().calibrate([labelled(10, True, "failure"), labelled(80, True, "success")], bootstrap=0)
    assert 0.1 < shown.band[1] < 0.8 and shown.balanced_accuracy == 1.0
    hidden = Judge().calibrate([labelled(10, False, "failure"), labelled(80, False, "success")], bootstrap=0)
    assert hidden.balanced_accuracy == 0.5  # every trajectory reads alike without its final answer
