"""Shared test setup: no network, no DSPy cache, a clean dspy.settings for every test; the real
environments the adapter, agent and dataset tests (tests/envs, tests/agent, tests/datasets) share,
one JVM per simulator for the whole session."""

import copy
import importlib
import itertools
import os
import shutil

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


@pytest.fixture
def store(tmp_path, hash_embedder):
    """An empty directory bank with the 64-d hash embedder (a test file may define its own)."""
    from rbdspy.memory import MemoryStore

    s = MemoryStore(tmp_path / "bank", embedder=hash_embedder)
    yield s
    s.close()


_databases = itertools.count()


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory):
    """A throwaway PostgreSQL server with pgvector for this test session."""
    try:
        import pgserver
    except ImportError as exc:  # the contract covers both backends: never skip one silently
        raise RuntimeError('the PostgreSQL store tests need pgserver: pip install -e ".[scale]"') from exc
    server = pgserver.get_server(tmp_path_factory.mktemp("pg"), cleanup_mode="stop")
    yield server
    server.cleanup()


@pytest.fixture
def pg_url(pg_server):
    """pg_url(name) -> the URL of a fresh database for this test, the same one for the same name."""
    import psycopg

    made: dict[str, str] = {}

    def url(name: str = "bank") -> str:
        if name not in made:
            database = f"rbdspy_test_{next(_databases)}"
            with psycopg.connect(pg_server.get_uri(), autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE "{database}"')
            made[name] = pg_server.get_uri(database)
        return made[name]

    return url


def _needs(package: str) -> None:
    pytest.importorskip(package)
    if shutil.which("java") is None:
        pytest.skip("Java is not installed")


@pytest.fixture(scope="session")
def sw_env():
    """ScienceWorld (seconds to start), skipped where the `envs` extra or Java is missing."""
    _needs("scienceworld")
    from rbdspy.envs.scienceworld import ScienceWorld

    env = ScienceWorld()
    yield env
    env.close()


@pytest.fixture(scope="session")
def twx_env():
    """TextWorld-Express, skipped where the `envs` extra or Java is missing."""
    _needs("textworld_express")
    from rbdspy.envs.twx import TextWorldExpress

    env = TextWorldExpress()
    yield env
    env.close()
