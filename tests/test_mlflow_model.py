"""A DSPy program holding a ReasoningBank is logged with MLflow's DSPy flavour, loaded in a new
process with both `mlflow.dspy.load_model` and `mlflow.pyfunc.load_model`, and serves: the bank
is carried by reference and reopened where it lives, so what the served program learns lands in
the same bank."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import dspy
import pytest
from dspy.utils import DummyLM

from rbdspy import MemoryStore, ReasoningBank
from rbdspy.judge.calibration import choose_band
from rbdspy.memory import HashEmbedder

mlflow = pytest.importorskip("mlflow")

LESSON = {"title": "Multiply, then check", "description": "When a product is asked.", "content": "Multiply and check."}
ROUND = [{"answer": "42"}, {"rationale": "The product is right.", "verdict": "success"}, {"lessons": [LESSON]}]

LOAD = textwrap.dedent(
    """
    import json, sys
    import mlflow
    mlflow.set_tracking_uri(sys.argv[1])
    program = mlflow.dspy.load_model(sys.argv[2])
    served = mlflow.pyfunc.load_model(sys.argv[2]).predict({"task": "what is 6*7?"})
    print(json.dumps({"store": type(program.store).__name__, "answer": served["answer"],
                      "verdict": served["verdict"]["label"], "band": list(program.judge.band),
                      "calibrated_for": program.judge.calibration.lm}))
    """
)


@pytest.mark.timeout(300)
def test_a_program_with_a_bank_logs_loads_in_a_new_process_and_serves(tmp_path):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(uri)
    mlflow.set_experiment("rbdspy-logged-bank")  # not whichever experiment an earlier test left active
    store = MemoryStore(tmp_path / "bank", embedder=HashEmbedder(dim=32))
    bank = ReasoningBank(dspy.Predict("task, memory -> answer"), store, compiled=None)
    # a calibrated band travels with the logged program
    bank.judge.use_calibration(choose_band([0.1, 0.2, 0.8, 0.9], [False, False, True, True], lm="dummy"))
    try:
        with dspy.context(lm=DummyLM(ROUND * 3)), mlflow.start_run():
            model_uri = mlflow.dspy.log_model(bank, name="bank").model_uri
    finally:
        store.close()
        mlflow.set_tracking_uri(previous)
    done = subprocess.run(
        [sys.executable, "-c", LOAD, uri, model_uri], capture_output=True, text=True, timeout=240, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-3000:]
    served = json.loads(done.stdout.strip().splitlines()[-1])
    assert served == {
        "store": "LazyStore",
        "answer": "42",
        "verdict": "success",
        "band": list(bank.judge.band),
        "calibrated_for": "dummy",
    }
    assert bank.judge.band != (0.26, 0.26)
    with MemoryStore(tmp_path / "bank", embedder=HashEmbedder(dim=32)) as again:
        assert [item.title for item in again.list()] == [LESSON["title"]]  # learned into the same bank


LOAD_SNAPSHOT = textwrap.dedent(
    """
    import json, sys
    import mlflow
    mlflow.set_tracking_uri(sys.argv[1])
    program = mlflow.dspy.load_model(sys.argv[2])
    titles = [item.title for item in program.store.list()]
    served = mlflow.pyfunc.load_model(sys.argv[2]).predict({"task": "what is 6*7?"})
    print(json.dumps({"store": type(program.store).__name__, "titles": titles, "answer": served["answer"]}))
    """
)


@pytest.mark.timeout(300)
def test_a_snapshot_travels_inside_the_model_and_never_writes_back(tmp_path):
    import rbdspy

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(uri)
    mlflow.set_experiment("rbdspy-logged-snapshot")
    store = MemoryStore(tmp_path / "bank", embedder=HashEmbedder(dim=32))
    bank = ReasoningBank(dspy.Predict("task, memory -> answer"), store, compiled=None)
    try:
        with dspy.context(lm=DummyLM(ROUND * 3)):
            bank(task="what is 6*7?")  # learns one lesson into the bank
            assert len(store) == 1
            with mlflow.start_run():
                model_uri = rbdspy.log_bank(bank, "bank", snapshot=True).model_uri
            assert not getattr(store, "_pickle_as_snapshot", False)  # only while logging
    finally:
        store.close()
        mlflow.set_tracking_uri(previous)
    import shutil

    shutil.rmtree(tmp_path / "bank")  # the model must not need the bank it was logged from
    restored_at = tmp_path / "restored"
    restored_at.mkdir()
    env = {**__import__("os").environ, "RBDSPY_SNAPSHOT_DIR": str(restored_at)}
    done = subprocess.run(
        [sys.executable, "-c", LOAD_SNAPSHOT, uri, model_uri],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    served = json.loads(done.stdout.strip().splitlines()[-1])
    assert served == {"store": "SnapshotStore", "titles": [LESSON["title"]], "answer": "42"}
    assert not (tmp_path / "bank").exists() and any(restored_at.iterdir())
