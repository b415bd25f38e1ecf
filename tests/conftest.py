"""Shared test setup: no network, no DSPy cache, a clean dspy.settings for every test."""

import copy
import importlib
import os

import dspy
import pytest

os.environ.setdefault("MLFLOW_TRACKING_URI", "sqlite:///:memory:")
# No DSPy autologging in unit tests (rbdspy.tracking reads this): it would trace every LM call.
os.environ.setdefault("RBDSPY_MLFLOW_AUTOLOG", "0")
# The module, not the `settings` object that dspy.dsp.utils re-exports under the same name.
dspy_settings_module = importlib.import_module("dspy.dsp.utils.settings")


@pytest.fixture(autouse=True)
def _isolated_dspy():
    """Disable DSPy's caches and restore the global settings after each test, so one test's LM
    or adapter can never answer another's calls. Tests call dspy.configure freely."""
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
    saved = copy.copy(dspy_settings_module.main_thread_config)
    dspy_settings_module.main_thread_config.update(copy.deepcopy(dspy_settings_module.DEFAULT_CONFIG))
    yield
    dspy_settings_module.main_thread_config.clear()
    dspy_settings_module.main_thread_config.update(saved)


@pytest.fixture
def hash_embedder():
    from rbdspy.memory.embedders import HashEmbedder

    return HashEmbedder(dim=64)
