"""Fixtures for the compile tests: tiny data files, scripted LMs, a throwaway MLflow store."""

from __future__ import annotations

import pytest
from compile_testing import records

from rbdspy.datasets.dataset import write_records


@pytest.fixture
def data_files(tmp_path):
    train, dev = tmp_path / "data" / "chest-train.jsonl", tmp_path / "data" / "chest-dev.jsonl"
    write_records(train, records(12, "train"))
    write_records(dev, records(6, "dev", start=100))
    return train, dev


@pytest.fixture
def mlflow_store(tmp_path, monkeypatch):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.setenv("RBDSPY_MLFLOW_AUTOLOG", "0")
    return uri
