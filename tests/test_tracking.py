"""MLflow setup in one place: the store, where artifacts go, the autolog switch, the UI command."""

import mlflow
import pytest

from rbdspy import tracking


def test_default_store_is_mlflow_db_in_the_working_directory(monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert tracking.tracking_uri() == "sqlite:///mlflow.db"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "sqlite:////elsewhere/x.db")
    assert tracking.tracking_uri() == "sqlite:////elsewhere/x.db"


def test_artifacts_live_beside_a_sqlite_store(tmp_path):
    assert tracking.artifact_location(f"sqlite:///{tmp_path / 'm.db'}") == (tmp_path / "mlartifacts").as_uri()
    assert tracking.artifact_location("http://127.0.0.1:5000") is None
    assert tracking.artifact_location("sqlite:///:memory:") is None


def test_a_run_goes_to_the_configured_store_and_experiment(tmp_path, monkeypatch):
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    with tracking.run("unit", experiment="rbdspy-test", autolog=False) as active:
        tracking.log_params({"long": "x" * 7000, "none": None})
        mlflow.log_metric("m", 1.0)
    mlflow.set_tracking_uri(uri)
    run = mlflow.get_run(active.info.run_id)
    assert run.data.params["long"] == "x" * 6000 and run.data.params["none"] == "" and run.data.metrics["m"] == 1.0
    experiment = mlflow.get_experiment(run.info.experiment_id)
    assert experiment.name == "rbdspy-test" and experiment.artifact_location == (tmp_path / "mlartifacts").as_uri()


def test_a_failing_body_marks_the_run_failed(tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'm.db'}")
    with pytest.raises(RuntimeError), tracking.run("boom", autolog=False) as active:
        raise RuntimeError("x")
    assert mlflow.get_run(active.info.run_id).info.status == "FAILED"


@pytest.mark.parametrize("value, expected", [("0", False), ("false", False), ("1", True), (None, True)])
def test_autolog_switch(monkeypatch, value, expected):
    if value is None:
        monkeypatch.delenv(tracking.AUTOLOG_ENV, raising=False)
    else:
        monkeypatch.setenv(tracking.AUTOLOG_ENV, value)
    assert tracking.autolog_enabled() is expected


def test_unit_tests_run_with_autolog_off():
    assert tracking.autolog_enabled() is False


def test_setup_configures_dspy_autolog_with_compiles(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(mlflow.dspy, "autolog", lambda **kw: calls.append(kw))
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'm.db'}")
    tracking.setup(autolog=True)
    tracking.setup(autolog=False)
    assert calls[0]["log_compiles"] is True and calls[1]["disable"] is True


def test_ui_serves_the_project_store_on_localhost(monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "sqlite:////tmp/p.db")
    cmd = tracking.ui_command(port=5123)
    assert cmd[1:4] == ["-m", "mlflow", "ui"]
    assert cmd[cmd.index("--backend-store-uri") + 1] == "sqlite:////tmp/p.db"
    assert cmd[cmd.index("--host") + 1] == "127.0.0.1" and cmd[cmd.index("--port") + 1] == "5123"
