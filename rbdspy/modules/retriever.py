"""MemoryRetriever: the items to serve for a task, as a DSPy module with no LM call."""

from __future__ import annotations

import asyncio
import hashlib
from typing import Literal

import dspy

from rbdspy.memory.ranking import UTILITY_WEIGHT, rank_score

DEFAULT_K = 1  # the paper's ablation: one retrieved experience worked best, more hurt
RANKINGS = ("similarity", "utility")
Ranking = Literal["similarity", "utility"]
CANDIDATE_POOL = 16  # similar items re-ranked per query (doubled while retired ones crowd it)


def _tiebreak(query: str, item_id: str) -> str:
    """A per-query pseudo-random order for exact ties: never the order items were inserted in,
    which would serve the oldest of many identical keys on every task."""
    return hashlib.blake2b(f"{query}\0{item_id}".encode(), digest_size=8).hexdigest()


class MemoryRetriever(dspy.Module):
    """Returns `Prediction(memories, scores, retrieval)`, best first.

    - `memories`: the items to serve (list[MemoryItem]); `scores`: their rank scores.
    - `retrieval`: one dict per served item (id, title, source, similarity, rank_score,
      value), what a benchmark record keeps to explain a serve.

    Candidates are the store's most similar items of the scope (scope filtering happens inside
    the store, before any top-k). Retired items are never served. Below `min_similarity` nothing
    is served: an irrelevant lesson costs tokens and can mislead a small model. With
    `ranking="utility"` the rank joins similarity and the item's learned usefulness
    (`memory/ranking.py`); with "similarity" (the paper's) it is the similarity. The store is a
    live handle: deep copies of this module (one per optimizer candidate) share it.
    """

    def __init__(
        self,
        store,
        k: int = DEFAULT_K,
        scope: str | None = None,
        *,
        ranking: Ranking = "similarity",
        min_similarity: float | None = None,
        utility_weight: float = UTILITY_WEIGHT,
    ):
        super().__init__()
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise ValueError(f"k must be an integer >= 0 (0 disables retrieval); got {k!r}")
        if ranking not in RANKINGS:
            raise ValueError(f"ranking must be one of {', '.join(RANKINGS)}; got {ranking!r}")
        if min_similarity is not None and not -1.0 <= min_similarity <= 1.0:
            raise ValueError(f"min_similarity is a cosine similarity in [-1, 1], or None; got {min_similarity!r}")
        self.store = store
        self.k = k
        self.scope = scope
        self.ranking = ranking
        self.min_similarity = min_similarity
        self.utility_weight = utility_weight

    def _candidates(self, query: str, k: int, scope: str | None) -> list:
        pool = max(CANDIDATE_POOL, 4 * k)
        while True:
            hits = self.store.search(query, k=pool, scope=scope)
            live = [(item, similarity) for item, similarity in hits if not item.retired]
            if len(live) >= pool // 2 or len(hits) < pool:
                return live
            pool *= 2

    def _rank(self, item, similarity: float) -> float:
        if self.ranking == "utility":
            return rank_score(similarity, item.value, self.utility_weight)
        return similarity

    def forward(self, task: str, k: int | None = None, scope: str | None = None) -> dspy.Prediction:
        k = self.k if k is None else k
        if k == 0 or not task or len(self.store) == 0:
            return dspy.Prediction(memories=[], scores=[], retrieval=[])
        scope = scope if scope is not None else self.scope
        ranked = sorted(
            (
                (self._rank(item, similarity), similarity, item)
                for item, similarity in self._candidates(task, k, scope)
                if self.min_similarity is None or similarity >= self.min_similarity
            ),
            key=lambda row: (-row[0], -row[1], _tiebreak(task, row[2].id)),
        )[:k]
        retrieval = [
            {
                "id": item.id,
                "title": item.title,
                "source": item.source,
                "similarity": round(float(similarity), 4),
                "rank_score": round(float(rank), 4),
                "value": round(item.value, 4),
            }
            for rank, similarity, item in ranked
        ]
        return dspy.Prediction(
            memories=[item for _, _, item in ranked], scores=[rank for rank, _, _ in ranked], retrieval=retrieval
        )

    async def aforward(self, task: str, k: int | None = None, scope: str | None = None) -> dspy.Prediction:
        return await asyncio.to_thread(self, task=task, k=k, scope=scope)
