"""Fixtures for the memory tests: stores on both backends, closed at teardown.

`open_store` is the contract fixture: every test that takes it runs twice, on a bank in a
directory (SQLite + FAISS) and on a bank on a real PostgreSQL server with pgvector, started once
per test session by pgserver in a temporary directory. Tests about one backend's own machinery
(index files, kill -9 of a writer, SQLite pages) take `open_sqlite_store`.
"""

from __future__ import annotations

import itertools

import pytest

from rbdspy.memory.store import MemoryStore

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


@pytest.fixture(params=["sqlite", "postgresql"])
def bank_at(request, tmp_path):
    """bank_at(name="bank") -> where a bank called `name` lives on this run's backend: a
    directory under tmp_path, or a postgresql:// URL of its own database."""
    if request.param == "sqlite":
        return lambda name="bank": tmp_path / name
    return request.getfixturevalue("pg_url")


def _factory(where, hash_embedder):
    opened: list[MemoryStore] = []

    def factory(name: str = "bank", **kwargs) -> MemoryStore:
        kwargs.setdefault("embedder", hash_embedder)
        store = MemoryStore(where(name), **kwargs)
        opened.append(store)
        return store

    return factory, opened


@pytest.fixture
def open_store(bank_at, hash_embedder):
    """open_store(name="bank", **kwargs) -> a MemoryStore on this run's backend."""
    factory, opened = _factory(bank_at, hash_embedder)
    yield factory
    for store in opened:
        store.close()


@pytest.fixture
def open_sqlite_store(tmp_path, hash_embedder):
    """open_sqlite_store(name="bank", **kwargs) -> a MemoryStore in a directory under tmp_path."""
    factory, opened = _factory(lambda name: tmp_path / name, hash_embedder)
    yield factory
    for store in opened:
        store.close()
