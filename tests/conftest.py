"""Shared test setup: no network, no DSPy cache, a clean dspy.settings for every test."""

import os

import dspy
import pytest

os.environ.setdefault("MLFLOW_TRACKING_URI", "sqlite:///:memory:")


@pytest.fixture(autouse=True)
def _isolated_dspy(monkeypatch):
    """Disable DSPy's disk/memory cache and reset the global settings between tests, so one
    test's LM or adapter can never answer another's calls."""
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
    with dspy.context(lm=None, adapter=None, track_usage=False):
        yield


@pytest.fixture
def hash_embedder():
    from rbdspy.memory.embedders import HashEmbedder

    return HashEmbedder(dim=64)
