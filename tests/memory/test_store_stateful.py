"""A stateful property test: random sequences of add, update, remove, search, flush and reopen
on a real store, checked after every step against a plain dict of what should be there (and
search against an exact search over that dict)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from memory_testing import make_item

from rbdspy.memory import HashEmbedder, MemoryStore

VOCABULARY = ["coin", "door", "kitchen", "open", "take", "look", "north", "cupboard", "recipe", "knife"]
WORDS = st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=4).map(" ".join)


class StoreModel(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.dir = Path(tempfile.mkdtemp())
        self.embedder = HashEmbedder(dim=32)
        self.store = MemoryStore(self.dir / "bank", embedder=self.embedder)
        self.model: dict[str, object] = {}
        self.n = 0

    def teardown(self):
        self.store.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    @rule(tasks=st.lists(WORDS, min_size=1, max_size=3))
    def add(self, tasks):
        self.n += 1
        batch = [make_item(f"item {self.n}-{i}", task=task) for i, task in enumerate(tasks)]
        self.store.add(batch)
        self.model.update({item.id: item for item in batch})

    @precondition(lambda self: self.model)
    @rule(data=st.data(), task=WORDS)
    def update(self, data, task):
        item_id = data.draw(st.sampled_from(sorted(self.model)))
        new = make_item(f"updated {item_id[:6]}", task=task, id=item_id)
        self.store.update(new)
        self.model[item_id] = new

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def remove(self, data):
        item_id = data.draw(st.sampled_from(sorted(self.model)))
        assert self.store.remove([item_id]) == 1
        del self.model[item_id]

    @rule()
    def flush(self):
        self.store.flush()

    @rule()
    def reopen(self):
        self.store.close()
        self.store = MemoryStore(self.dir / "bank", embedder=self.embedder)

    @rule(query=WORDS)
    def search_is_exact(self, query):
        hits = self.store.search(query, k=1)
        if not self.model:
            assert hits == []
            return
        q = self.embedder([query])[0]
        q = q / (np.linalg.norm(q) or 1.0)
        vectors = self.embedder([item.key_text("task") for item in self.model.values()])
        vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        assert abs(hits[0][1] - float((vectors @ q).max())) < 1e-4

    @invariant()
    def same_items(self):
        assert set(self.store.ids()) == set(self.model) and len(self.store) == len(self.model)


StoreModel.TestCase.settings = settings(max_examples=100, stateful_step_count=30, deadline=None)
test_store_behaves_like_a_dict_with_exact_search = StoreModel.TestCase
