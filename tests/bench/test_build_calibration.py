"""`--calibrate-on-build`: a judge-labelled arm learns from the environment's labels on build tasks,
its judge scores each, and its band is chosen on those scores before the first measured task;
the measured tasks never feed it, and a resumed run chooses the same band."""

from __future__ import annotations

import json

import dspy
import pytest
from bench_testing import quiet_bench
from judge_testing import signal_lm

import rbdspy
from rbdspy.bench.build_calibration import SCORE_FIELD, BuildCalibration, calibratable, read_calibration
from rbdspy.bench.records import arm_path, read_records
from rbdspy.bench.tasks import BenchTask
from rbdspy.judge import RationaleJudge
from rbdspy.judge.judge import DEFAULT_PROBABILITY_BAND
from rbdspy.types import Step, Trajectory

BUILD = BenchTask(index=0, task_id="env/train/0", phase="build", task_type="t")
MEASURE = BenchTask(index=9, task_id="env/dev/9", phase="measure", task_type="t")


def bank(store, **options):
    return rbdspy.ReasoningBank(dspy.Predict("task, memory -> answer"), store, compiled=None, **options)


def row(index, phase, probability, success):
    return {"index": index, "phase": phase, SCORE_FIELD: probability, "success": success}


BUILD_ROWS = [row(0, "build", 0.2, False), row(1, "build", 0.3, False), row(2, "build", 0.7, True)]
BUILD_ROWS += [row(3, "build", 0.8, True)]


def test_only_a_bank_labelled_by_its_own_probability_judge_is_calibrated(store):
    assert calibratable(bank(store))
    assert not calibratable(bank(store, trust_outcome=True))
    assert not calibratable(bank(store, judge=RationaleJudge()))
    assert not calibratable(dspy.Predict("task -> answer"))


def test_build_tasks_are_labelled_by_the_environment_and_measured_ones_by_the_calibrated_judge(store, tmp_path):
    program = bank(store)
    calibration = BuildCalibration(program, tmp_path / "arm.calibration.json")
    calibration.before(BUILD, [])
    assert program.learner.trust_outcome and program.judge.band == DEFAULT_PROBABILITY_BAND
    # a measured record with a score must not move the band: measured tasks never feed calibration
    records = [*BUILD_ROWS, row(8, "measure", 0.75, False)]
    calibration.before(MEASURE, records)
    assert not program.learner.trust_outcome
    low, high = program.judge.band
    assert low == high and 0.3 < high < 0.7
    saved = json.loads((tmp_path / "arm.calibration.json").read_text())
    assert saved["calibration"]["band"] == [low, high] and "threshold" in saved["summary"]
    # a resumed run rebuilds the same band from the same records
    again = bank(store)
    BuildCalibration(again, tmp_path / "again.json").before(MEASURE, BUILD_ROWS)
    assert again.judge.band == program.judge.band


def test_without_both_outcomes_among_the_build_tasks_the_shipped_band_stays(store, tmp_path):
    program = bank(store)
    BuildCalibration(program, tmp_path / "arm.calibration.json").before(MEASURE, BUILD_ROWS[2:])
    assert program.judge.band == DEFAULT_PROBABILITY_BAND and not program.learner.trust_outcome
    saved = json.loads((tmp_path / "arm.calibration.json").read_text())
    assert saved["calibration"] is None and "at least one success and one failure" in saved["why_not"]


def test_a_build_trajectory_is_scored_by_the_judge_once(store, tmp_path):
    lm, server = signal_lm()
    dspy.configure(lm=lm, adapter=dspy.JSONAdapter())
    task = "open the chest (signal 64)"
    steps = [
        Step(role="env", content="A hall."),
        Step(role="agent", content="open chest"),
        Step(role="env", content="."),
    ]
    pred = dspy.Prediction(trajectory=Trajectory(task=task, steps=steps, outcome=True))
    score = BuildCalibration(bank(store), tmp_path / "c.json").score(pred)
    assert score == pytest.approx(0.64, abs=1e-3) and server.calls == 1
    assert BuildCalibration(bank(store), tmp_path / "c.json").score(dspy.Prediction()) is None


def test_the_bench_records_build_scores_and_the_calibration(demo_env, tmp_path, hash_embedder):
    out = tmp_path / "run"
    results = quiet_bench(
        demo_env, out, hash_embedder, "no-memory,reasoningbank,reasoningbank-oracle", n_tasks=4, max_steps=2,
        calibrate_on_build=True,
    )  # fmt: skip
    rows = read_records(arm_path(out, "reasoningbank"))
    assert [SCORE_FIELD in r for r in rows] == [r["phase"] == "build" for r in rows]
    assert all(SCORE_FIELD not in r for r in read_records(arm_path(out, "reasoningbank-oracle")))
    assert read_calibration(arm_path(out, "reasoningbank")) is not None
    assert read_calibration(arm_path(out, "reasoningbank-oracle")) is None
    assert "--calibrate-on-build" in results["command"]
    assert "calibrated on the build tasks" in (out / "results.md").read_text()
    with pytest.raises(ValueError, match="calibrate_on_build"):
        quiet_bench(demo_env, out, hash_embedder, "no-memory", n_tasks=4, max_steps=2, resume=True)
