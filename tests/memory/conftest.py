"""Fixtures for the memory tests: a store factory that closes what it opens."""

from __future__ import annotations

import pytest

from rbdspy.memory.store import MemoryStore


@pytest.fixture
def open_store(tmp_path, hash_embedder):
    """open_store(name="bank", **kwargs) -> a MemoryStore under tmp_path; all are closed at teardown."""
    opened: list[MemoryStore] = []

    def factory(name: str = "bank", **kwargs) -> MemoryStore:
        kwargs.setdefault("embedder", hash_embedder)
        store = MemoryStore(tmp_path / name, **kwargs)
        opened.append(store)
        return store

    yield factory
    for store in opened:
        store.close()
