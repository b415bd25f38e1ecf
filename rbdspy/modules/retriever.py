"""MemoryRetriever: the task's top-k memory items, as a DSPy module with no LM call."""

from __future__ import annotations

import asyncio

import dspy

DEFAULT_K = 1  # the paper's ablation: one retrieved experience worked best, more hurt


class MemoryRetriever(dspy.Module):
    """Returns `Prediction(memories=list[MemoryItem], scores=list[float])`, best first.

    Scope filtering happens inside the store before top-k, so a scoped query always gets up to
    k items of its own scope. The store is a live handle: deep copies of this module (one per
    optimizer candidate) share it.
    """

    def __init__(self, store, k: int = DEFAULT_K, scope: str | None = None):
        super().__init__()
        if k < 0:
            raise ValueError(f"k must be >= 0 (0 disables retrieval); got {k}")
        self.store = store
        self.k = k
        self.scope = scope

    def forward(self, task: str, k: int | None = None, scope: str | None = None) -> dspy.Prediction:
        k = self.k if k is None else k
        if k == 0 or not task or len(self.store) == 0:
            return dspy.Prediction(memories=[], scores=[])
        hits = self.store.search(task, k=k, scope=scope if scope is not None else self.scope)
        return dspy.Prediction(memories=[item for item, _ in hits], scores=[score for _, score in hits])

    async def aforward(self, task: str, k: int | None = None, scope: str | None = None) -> dspy.Prediction:
        return await asyncio.to_thread(self, task=task, k=k, scope=scope)
