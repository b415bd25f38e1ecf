"""The benchmark tests play real TextWorld-Express demo games (one JVM for the session) and, in
one module, the ScienceWorld demo tasks, with a scripted LM; they are skipped where the `envs`
extra or Java is missing."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _demo_env(name: str, package: str):
    """The demo's small task set of environment `name`, skipped without `package` or Java."""
    pytest.importorskip(package)
    if shutil.which("java") is None:
        pytest.skip("Java is not installed")
    from rbdspy.envs.task_sets import open_demo_env

    env = open_demo_env(name)
    yield env
    env.close()


@pytest.fixture(scope="session")
def demo_env():
    yield from _demo_env("twx", "textworld_express")


@pytest.fixture(scope="module")
def sw_demo_env():
    yield from _demo_env("scienceworld", "scienceworld")


@pytest.fixture
def mlflow_store(tmp_path, monkeypatch):
    """A temporary sqlite MLflow store for the test; returns its URI."""
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    return uri
