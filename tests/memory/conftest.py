"""Fixtures for the memory tests: stores on both backends, closed at teardown.

`open_store` is the contract fixture: every test that takes it runs twice, on a bank in a
directory (SQLite + FAISS) and on a bank on a real PostgreSQL server with pgvector, started once
per test session by pgserver in a temporary directory. Tests about one backend's own machinery
(index files, kill -9 of a writer, SQLite pages) take `open_sqlite_store`.
"""

from __future__ import annotations

import pytest

from rbdspy.memory.store import MemoryStore


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
