"""MLflow setup, in one place.

Every compile and evaluation is an MLflow run in the project's tracking store: by default
`sqlite:///mlflow.db` in the working directory, or whatever `MLFLOW_TRACKING_URI` names.
`rbdspy ui` opens the same store. DSPy autologging (`mlflow.dspy.autolog(log_compiles=True)`)
is switched on by `setup()` unless `RBDSPY_MLFLOW_AUTOLOG=0` (the unit tests set that: autolog
writes traces for every LM call, which they neither need nor want to wait for).
"""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rbdspy.memory.snapshot import snapshots

DEFAULT_TRACKING_URI = "sqlite:///mlflow.db"
DEFAULT_EXPERIMENT = "rbdspy"
AUTOLOG_ENV = "RBDSPY_MLFLOW_AUTOLOG"


def tracking_uri() -> str:
    return os.environ.get("MLFLOW_TRACKING_URI") or DEFAULT_TRACKING_URI


def artifact_location(uri: str) -> str | None:
    """Where a new experiment keeps its artifacts: beside a SQLite store (`<db dir>/mlartifacts`),
    so the store and its artifacts move together and no `mlruns/` appears in whatever directory
    a command happens to run from; a server decides for itself (None)."""
    if uri.startswith("sqlite:///") and ":memory:" not in uri:
        db = Path(uri[len("sqlite:///") :]).expanduser().resolve()
        return (db.parent / "mlartifacts").as_uri()
    return None


def autolog_enabled() -> bool:
    return os.environ.get(AUTOLOG_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def setup(experiment: str = DEFAULT_EXPERIMENT, autolog: bool | None = None) -> str:
    """Points MLflow at the tracking store, selects `experiment` (created if new) and
    configures DSPy autologging. Returns the tracking URI."""
    import mlflow  # heavy: mlflow

    uri = tracking_uri()
    mlflow.set_tracking_uri(uri)
    if mlflow.get_experiment_by_name(experiment) is None:
        mlflow.create_experiment(experiment, artifact_location=artifact_location(uri))
    mlflow.set_experiment(experiment)
    autolog = autolog_enabled() if autolog is None else autolog
    if autolog:
        mlflow.dspy.autolog(log_compiles=True, log_evals=True, log_traces_from_compile=False, silent=True)
    else:
        mlflow.dspy.autolog(disable=True, silent=True)
    return uri


@contextmanager
def run(
    name: str, *, experiment: str = DEFAULT_EXPERIMENT, tags: dict[str, str] | None = None, autolog: bool | None = None
):
    """One MLflow run (ended even if the body raises, which marks it FAILED)."""
    import mlflow  # heavy: mlflow

    setup(experiment, autolog)
    with mlflow.start_run(run_name=name, tags=tags) as active:
        yield active


def log_bank(program: Any, name: str = "program", *, snapshot: bool = False, **log_model_kwargs: Any):
    """Logs a DSPy program that holds a bank (ReasoningBank, MaTTS, or a program embedding one)
    with MLflow's DSPy flavour; returns `mlflow.dspy.log_model`'s ModelInfo.

    By default the bank travels by reference: the loaded model reopens it where it lives (its
    directory, or its postgresql:// URL and namespace) and what it learns lands there. With
    `snapshot=True` every item and its vectors travel inside the model instead, restored into a
    fresh bank on load (RBDSPY_SNAPSHOT_DIR, else a temporary directory): a self-contained model
    that never writes back to the bank it was logged from."""
    import mlflow  # heavy: mlflow

    if not snapshot:
        return mlflow.dspy.log_model(program, name=name, **log_model_kwargs)
    with snapshots(program):
        return mlflow.dspy.log_model(program, name=name, **log_model_kwargs)


def log_params(params: dict[str, Any]) -> None:
    """Params as strings, long values cut to MLflow's 6000-character limit."""
    import mlflow  # heavy: mlflow

    mlflow.log_params({k: (str(v)[:6000] if v is not None else "") for k, v in params.items()})


def ui_command(host: str = "127.0.0.1", port: int = 5000) -> list[str]:
    return [
        sys.executable,
        "-m",
        "mlflow",
        "ui",
        "--backend-store-uri",
        tracking_uri(),
        "--host",
        host,
        "--port",
        str(port),
        # One worker: a local UI for one user; MLflow's default four (and its job runners) took
        # about 50 s to answer on a 2-core machine.
        "--workers",
        "1",
    ]


def ui(host: str = "127.0.0.1", port: int = 5000) -> int:
    """Runs the MLflow UI on the project's store until interrupted; returns its exit code."""
    try:
        return subprocess.call(ui_command(host, port))
    except KeyboardInterrupt:
        return 0
