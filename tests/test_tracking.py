"""MLflow setup in one place: the store, where artifacts go, the autolog switch, the UI command."""

import dspy
import mlflow
import pytest

from rbdspy import tracking


@pytest.fixture(autouse=True)
def _restore_mlflow():
    """setup() points MLflow's process-global state at a store; later tests must not inherit it."""
    uri = mlflow.get_tracking_uri()
    yield
    mlflow.dspy.autolog(disable=True, silent=True)
    mlflow.set_tracking_uri(uri)


def _runs_in(db, experiment):
    client = mlflow.MlflowClient(f"sqlite:///{db}")
    found = client.get_experiment_by_name(experiment)
    return found, ([] if found is None else client.search_runs([found.experiment_id]))


def test_default_store_is_mlflow_db_in_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.chdir(tmp_path)
    assert tracking.tracking_uri() == "sqlite:///mlflow.db"
    with tracking.run("default-store", experiment="rbdspy-default", autolog=False) as active:
        mlflow.log_metric("m", 2.0)
    assert (tmp_path / "mlflow.db").is_file() and not (tmp_path / "mlruns").exists()
    experiment, runs = _runs_in(tmp_path / "mlflow.db", "rbdspy-default")
    assert [r.info.run_id for r in runs] == [active.info.run_id] and runs[0].data.metrics["m"] == 2.0
    assert runs[0].info.run_name == "default-store" and runs[0].info.status == "FINISHED"
    assert experiment.artifact_location == (tmp_path / "mlartifacts").as_uri()


def test_mlflow_tracking_uri_overrides_the_default(tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere" / "x.db"
    elsewhere.parent.mkdir()
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{elsewhere}")
    monkeypatch.chdir(tmp_path)
    assert tracking.setup("rbdspy-override", autolog=False) == f"sqlite:///{elsewhere}"
    with tracking.run("override", experiment="rbdspy-override", autolog=False) as active:
        pass
    assert not (tmp_path / "mlflow.db").exists()  # nothing in the working directory
    _, runs = _runs_in(elsewhere, "rbdspy-override")
    assert [r.info.run_id for r in runs] == [active.info.run_id]
    assert tracking.ui_command()[tracking.ui_command().index("--backend-store-uri") + 1] == f"sqlite:///{elsewhere}"


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


@pytest.mark.parametrize("value, traced", [("1", True), ("0", False), ("off", False)])
def test_the_autolog_switch_decides_whether_dspy_calls_are_traced(tmp_path, monkeypatch, value, traced):
    """The run follows RBDSPY_MLFLOW_AUTOLOG when autolog is not given: a DSPy call inside it
    leaves a trace in the store, or none."""
    from dspy.utils import DummyLM

    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'm.db'}")
    monkeypatch.setenv(tracking.AUTOLOG_ENV, value)
    with tracking.run("traced", experiment="rbdspy-autolog") as active:
        dspy.configure(lm=DummyLM([{"answer": "4"}]))
        assert dspy.Predict("question -> answer")(question="2 + 2?").answer == "4"
    mlflow.flush_trace_async_logging()
    traces = mlflow.search_traces(run_id=active.info.run_id, return_type="list")
    assert len(traces) == (1 if traced else 0)


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
