"""MemoryRetriever: the items to serve for a task, as a DSPy module with no LM call."""

from __future__ import annotations

import asyncio
import copy
import hashlib
from collections.abc import Callable
from typing import Literal

import dspy

from rbdspy.lessons.auto import AUTO, MEASURED, auto_for
from rbdspy.memory.ranking import UTILITY_WEIGHT, rank_score
from rbdspy.memory.store import MemoryStore
from rbdspy.types import MemoryItem

RANKINGS = ("similarity", "utility")
Ranking = Literal["similarity", "utility"]
QUERY_KINDS = ("situation", "task")
QueryKind = Literal["situation", "task"]
# The retrieval defaults, each a departure from the paper's (k=1, "similarity", no floor and the
# task text as the query: `rbdspy.loop.presets.PAPER`): utility ranking lets outcomes reorder
# near-equal candidates and retire a harmful item; the floor serves nothing rather than a lesson
# from an unrelated task, which costs tokens and can mislead a small model; the situation tells
# apart tasks made from one template. Measured:
# docs/results/memory.md#retrieval-that-tells-template-tasks-apart-benchmarksretrieval_benchpy
DEFAULT_RANKING: Ranking = "utility"
DEFAULT_MIN_SIMILARITY: float | None | Literal["auto"] = AUTO
DEFAULT_QUERY: QueryKind = "situation"
CANDIDATE_POOL = 16  # similar items re-ranked per query (doubled while retired ones crowd it)
# How much the situation's similarity adds to the task's: enough to order candidates whose task
# texts are identical (one template, many games), too little to overturn a clearly better task
# match.
SITUATION_WEIGHT = 0.1
# Similarity floors measured per embedder on the train split, each the floor that keeps every
# serve of a seen task type and refuses most serves of unseen ones.
# "auto" uses the embedder's measured floor, and no floor for an embedder not measured here:
# cosine scales differ between embedders, so one number cannot fit them all.
MEASURED_FLOORS = {"sentence-transformers/all-MiniLM-L6-v2": 0.7}


def _tiebreak(query: str, position: int) -> str:
    """A per-query pseudo-random order for exact ties: never the order items were inserted in,
    which would serve the oldest of many identical keys on every task. It hashes the item's
    position in the store's answer (ties come in insertion order), not its id: ids are random, so
    a run that hashed them served different items on a rerun with the same seed."""
    return hashlib.blake2b(f"{query}\0{position}".encode(), digest_size=8).hexdigest()


class MemoryRetriever(dspy.Module):
    """Returns `Prediction(memories, scores, retrieval)`, best first.

    - `memories`: the items to serve (list[MemoryItem]); `scores`: their rank scores.
    - `retrieval`: one dict per served item (id, title, source, similarity to the task,
      similarity of situations, rank_score, value), what a benchmark record keeps to explain a
      serve.

    Candidates are the store's items most similar to the task text (a call's `scope` is filtered
    inside the store, before any top-k). Given the task's `situation` (the task plus what the
    agent first saw), each candidate's similarity gains `situation_weight` times the similarity
    of the situation it was learned in: tasks made from one template are told apart by what
    differs between them. Retired items are never served. Below `min_similarity` (on the task
    text) nothing is served: an irrelevant lesson costs tokens and can mislead a small model.
    The store is a live handle: deep copies of this module (one per optimizer candidate) share it.

    It is the retrieval part of a `ReasoningBank` (`ReasoningBank(agent, store,
    retriever=MemoryRetriever(store, k=3))`); its defaults are the bank's.

    Args:
        store: the `MemoryStore` to serve from (the bank's own).
        k: items served per task (0 disables retrieval). "auto" (the default): 1, the paper's
            best, except for a task the caller says is in a world that persists (`world`): 10
            there, as a map is about the world rather than the task (`rbdspy.lessons.auto`).
        ranking: "utility" (the default): similarity joined with each item's usefulness learned
            from the outcomes of the tasks it was served on (`memory/ranking.py`); a bank whose
            retriever ranks so retires an item that is confidently harmful (kept, no longer
            served). "similarity" (the paper's): the similarity alone.
        min_similarity: below this cosine similarity (of task texts) nothing is served. "auto"
            (the default): the floor measured for the store's embedder (0.7 for the embedded
            MiniLM; none for an embedder rbdspy has not measured), and none for a task in a
            world that persists. None serves at any similarity.
        query: what a bank looks the task up by. "situation" (the default): what the agent
            declares of the task in context (its `situation(**task_inputs)` method: EnvAgent's is
            the task plus the first observation), with the task text; "task": the task text alone
            (the paper's). An agent with no `situation` method is always queried by task text.
        utility_weight, situation_weight: how much usefulness and the situation's similarity
            weigh in the rank.
        serves: only items it accepts are served (a bank that serves one kind of item, such as
            `DemoMemory`'s won episodes beside the world's records); None serves every live item.
    """

    def __init__(
        self,
        store: MemoryStore,
        k: int | Literal["auto"] = AUTO,
        *,
        ranking: Ranking = DEFAULT_RANKING,
        min_similarity: float | None | Literal["auto"] = DEFAULT_MIN_SIMILARITY,
        query: QueryKind = DEFAULT_QUERY,
        utility_weight: float = UTILITY_WEIGHT,
        situation_weight: float = SITUATION_WEIGHT,
        serves: Callable[[MemoryItem], bool] | None = None,
    ):
        super().__init__()
        if k != AUTO and (isinstance(k, bool) or not isinstance(k, int) or k < 0):
            raise ValueError(f"k must be an integer >= 0 (0 disables retrieval) or 'auto'; got {k!r}")
        if ranking not in RANKINGS:
            raise ValueError(f"ranking must be one of {', '.join(RANKINGS)}; got {ranking!r}")
        if min_similarity != AUTO and min_similarity is not None and not -1.0 <= min_similarity <= 1.0:
            raise ValueError(f"min_similarity is a cosine in [-1, 1], 'auto' or None; got {min_similarity!r}")
        if query not in QUERY_KINDS:
            raise ValueError(f"query must be one of {', '.join(QUERY_KINDS)}; got {query!r}")
        self.store = store
        self.k = k
        self.ranking = ranking
        self.min_similarity = min_similarity
        self.query = query
        self.utility_weight = utility_weight
        self.situation_weight = situation_weight
        self.serves = serves

    def serving(self, serves: Callable[[MemoryItem], bool]) -> MemoryRetriever:
        """This retriever (the same store and settings) serving only the items `serves` accepts."""
        narrowed = copy.copy(self)
        narrowed.serves = serves
        return narrowed

    @property
    def floor(self) -> float | None:
        """The similarity floor in force (`min_similarity`, resolved for "auto") for a task in no
        persistent world."""
        return self.floor_for(None)

    def floor_for(self, world: str | None) -> float | None:
        """The similarity floor for a task in `world` (None: in no world that persists)."""
        floor = auto_for(world).min_similarity if self.min_similarity == AUTO else self.min_similarity
        return MEASURED_FLOORS.get(getattr(self.store.embedder, "name", None)) if floor == MEASURED else floor

    def k_for(self, world: str | None) -> int:
        """How many items a task in `world` is served (`k`, resolved for "auto")."""
        return auto_for(world).k if self.k == AUTO else self.k

    def _candidates(self, query: str, k: int, scope: str | None) -> list:
        pool = max(CANDIDATE_POOL, 4 * k)
        while True:
            hits = self.store.search(query, k=pool, scope=scope)
            live = [
                (item, similarity)
                for item, similarity in hits
                if not item.retired and (self.serves is None or self.serves(item))
            ]
            if len(live) >= pool // 2 or len(hits) < pool:
                return live
            pool *= 2

    def _situation_similarities(self, situation: str, items: list) -> list[float]:
        """Cosine of `situation` with the situation each item was learned in (its task when none
        was recorded)."""
        texts = [situation] + [
            (item.provenance[0].situation if item.provenance else None) or item.task or item.text() for item in items
        ]
        vectors = self.store.embed(texts)
        return [float(v) for v in vectors[1:] @ vectors[0]]

    def forward(
        self,
        task: str,
        k: int | None = None,
        scope: str | None = None,
        situation: str | None = None,
        world: str | None = None,
    ) -> dspy.Prediction:
        """`scope`: only items of this scope (None: every item); `world`: the world that persists
        the task is played in, if any (it resolves "auto")."""
        k = self.k_for(world) if k is None else k
        if k == 0 or not task or len(self.store) == 0:
            return dspy.Prediction(memories=[], scores=[], retrieval=[])
        floor = self.floor_for(world)
        candidates = [
            (item, similarity)
            for item, similarity in self._candidates(task, k, scope)
            if floor is None or similarity >= floor
        ]
        situated = self._situation_similarities(situation, [i for i, _ in candidates]) if situation else None
        rows = []
        for n, (item, similarity) in enumerate(candidates):
            score = similarity + (self.situation_weight * situated[n] if situated else 0.0)
            rank = rank_score(score, item.value, self.utility_weight) if self.ranking == "utility" else score
            rows.append((rank, score, item, similarity, situated[n] if situated else None, n))
        rows.sort(key=lambda row: (-row[0], -row[1], _tiebreak(situation or task, row[5])))
        served = rows[:k]
        retrieval = [
            {
                "id": item.id,
                "title": item.title,
                "source": item.source,
                "similarity": round(float(similarity), 4),
                "situation_similarity": None if sit is None else round(sit, 4),
                "rank_score": round(float(rank), 4),
                "value": round(item.value, 4),
            }
            for rank, _, item, similarity, sit, _ in served
        ]
        return dspy.Prediction(
            memories=[row[2] for row in served], scores=[row[0] for row in served], retrieval=retrieval
        )

    async def aforward(
        self,
        task: str,
        k: int | None = None,
        scope: str | None = None,
        situation: str | None = None,
        world: str | None = None,
    ) -> dspy.Prediction:
        return await asyncio.to_thread(self, task=task, k=k, scope=scope, situation=situation, world=world)
