"""`rbdspy calibrate --judge` and `calibrate_judge`: the band placed on labelled records, written
where the bank loads it (a directory, a judge's .json, a bank's .json), logged to MLflow."""

from __future__ import annotations

import json

import dspy
import mlflow
import pytest
from judge_testing import signal_lm
from rich.console import Console
from typer.testing import CliRunner

import rbdspy
import rbdspy.lm
from rbdspy.cli import app, seams
from rbdspy.datasets.dataset import LabelledTrajectory, write_records
from rbdspy.judge import RationaleJudge
from rbdspy.judge.judge import DEFAULT_PROBABILITY_BAND
from rbdspy.optimizers.calibrate import calibrate_judge
from rbdspy.types import Step, Trajectory


def labelled(signal: int, won: bool) -> LabelledTrajectory:
    task = f"open the chest (signal {signal})"
    steps = [Step(role="env", content="A hallway."), Step(role="agent", content="open chest")]
    steps += [Step(role="env", content="Done."), Step(role="agent", content="look"), Step(role="env", content="Ok.")]
    trajectory = Trajectory(task=task, steps=steps, final_answer="score", outcome=won)
    return LabelledTrajectory(
        trajectory=trajectory,
        label="success" if won else "failure",
        kind="agent",
        env="fake",
        task_id=f"fake/chest/train/{signal}",
        split="train",
    )


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "mine.jsonl"
    write_records(path, [labelled(s, False) for s in (55, 60, 65, 70)] + [labelled(s, True) for s in (80, 85, 90)])
    return path


@pytest.fixture
def model(monkeypatch):
    lm, server = signal_lm("local/model-a")
    monkeypatch.setattr(rbdspy.lm, "make_lm", lambda spec=None, **kw: lm)
    monkeypatch.setattr(seams, "console", Console(width=200))
    dspy.configure(adapter=dspy.JSONAdapter())
    return lm


def test_calibrate_into_a_directory_the_bank_loads(data, tmp_path, model, mlflow_store, store):
    calibration, saved, run_id = calibrate_judge([data], path=tmp_path / "compiled", lm=model)
    assert saved == tmp_path / "compiled" / "judge.json" and 0.7 < calibration.band[1] < 0.8
    agent = dspy.Predict("task, memory -> answer")
    bank = rbdspy.ReasoningBank(agent, store, compiled=tmp_path / "compiled")
    assert bank.judge.band == calibration.band and bank.judge.calibration.lm == "local/model-a"
    run = mlflow.get_run(run_id)
    assert run.data.params["lm"] == "local/model-a" and run.data.params["n"] == "7"
    assert run.data.metrics["balanced_accuracy"] == calibration.balanced_accuracy


def test_calibrate_a_saved_bank_changes_only_its_band(data, tmp_path, model, mlflow_store, store):
    agent = dspy.Predict("task, memory -> answer")
    rbdspy.ReasoningBank(agent, store, compiled=None).save(str(tmp_path / "bank.json"))
    before = json.loads((tmp_path / "bank.json").read_text())
    calibration, saved, _ = calibrate_judge([data], path=tmp_path / "bank.json", lm=model)
    after = json.loads(saved.read_text())
    assert {k for k in before if before[k] != after[k]} == {"judge.band_state"}
    reopened = rbdspy.ReasoningBank(agent, store, compiled=None).load(str(tmp_path / "bank.json"))
    assert reopened.judge.band == calibration.band


def test_the_cli_prints_the_band_and_its_interval_and_saves_it(data, tmp_path, model, mlflow_store):
    result = CliRunner().invoke(app, ["calibrate", "--judge", "--from", str(data), "--path", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "threshold 0.7" in result.output and "95% interval" in result.output
    assert (
        "calibrated for local/model-a" in result.output and f"saved {tmp_path / 'out' / 'judge.json'}" in result.output
    )
    saved = json.loads((tmp_path / "out" / "judge.json").read_text())
    assert saved["band_state"]["band"] != list(DEFAULT_PROBABILITY_BAND)


def invoke(*args):
    return CliRunner().invoke(app, ["calibrate", *map(str, args)], env={"COLUMNS": "400"})


def test_the_cli_names_what_is_wrong(data, tmp_path, model, mlflow_store):
    missing = invoke("--from", data)
    assert missing.exit_code == 2 and "--judge" in missing.output
    rationale = invoke("--judge", "--from", data, "--design", "rationale")
    assert rationale.exit_code == 2 and "no probability to calibrate" in rationale.output
    one_kind = tmp_path / "wins.jsonl"
    write_records(one_kind, [labelled(80, True), labelled(90, True)])
    wins = invoke("--judge", "--from", one_kind)
    assert wins.exit_code == 2 and "at least one success and one failure" in wins.output


def test_a_bank_file_of_another_judge_design_is_named(data, tmp_path, model, mlflow_store, store):
    agent = dspy.Predict("task, memory -> answer")
    rbdspy.ReasoningBank(agent, store, judge=RationaleJudge(), compiled=None).save(str(tmp_path / "bank.json"))
    with pytest.raises(ValueError, match="its judge has no saved state for 'last_steps_verdict'"):
        calibrate_judge([data], path=tmp_path / "bank.json", lm=model)
