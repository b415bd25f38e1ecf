"""Consolidation policies: how newly extracted items enter the store.

The paper simply appends every new item (`AppendPolicy`, the default) and shows that this already
works. Over long runs the bank fills with near-copies of the same lesson, which crowd out other
lessons at small top-k; `DedupPolicy` merges a new item into an existing near-duplicate of the same
scope instead, keeping the existing text and appending the new item's provenance, so no record of
where a lesson was confirmed is lost. The user chooses; nothing dedups silently.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from rbdspy.memory.store import UNSCOPED, MemoryStore
from rbdspy.types import MemoryItem

__all__ = ["ConsolidationPolicy", "AppendPolicy", "DedupPolicy", "make_policy"]


@runtime_checkable
class ConsolidationPolicy(Protocol):
    """Puts `items` into `store`; returns, for each input item in order, the item as stored
    (the new item itself, or the existing item it was merged into)."""

    def apply(self, store: MemoryStore, items: Iterable[MemoryItem]) -> list[MemoryItem]: ...


class AppendPolicy:
    """Add every item (the paper's default): one embedder call and one transaction per batch."""

    name = "append"

    def apply(self, store: MemoryStore, items: Iterable[MemoryItem]) -> list[MemoryItem]:
        batch = [items] if isinstance(items, MemoryItem) else list(items)
        store.add(batch)
        return batch

    def __repr__(self) -> str:
        return "AppendPolicy()"


class DedupPolicy:
    """Merge near-duplicates instead of adding them.

    A new item whose item-text vector has cosine >= `threshold` with an item of the same scope
    (already stored, or earlier in the same batch) is merged into it: the existing item keeps its
    title, description and content and gets the new item's provenance appended. Anything else is
    added. Items are compared on their own text ("item" vectors) whatever key the store searches
    by: two lessons learned on the same task can still say different things.
    """

    name = "dedup"

    def __init__(self, threshold: float = 0.9):
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0.0 < threshold <= 1.0:
            raise ValueError(f"DedupPolicy threshold must be a cosine in (0, 1], got {threshold!r}.")
        self.threshold = float(threshold)

    def apply(self, store: MemoryStore, items: Iterable[MemoryItem]) -> list[MemoryItem]:
        batch = [items] if isinstance(items, MemoryItem) else list(items)
        if not batch:
            return []
        # Search and add under the bank's write lock: two agents learning the same lesson at the
        # same moment must not both find no duplicate and both add it.
        with store.exclusive():
            return self._apply(store, batch)

    def _apply(self, store: MemoryStore, batch: list[MemoryItem]) -> list[MemoryItem]:
        task_vectors, item_vectors = store.embed_items(batch)
        new_rows: list[int] = []  # positions in `batch` that will be added
        merged: dict[str, MemoryItem] = {}  # existing id -> its updated state
        target: list[tuple[str, Any]] = []  # per input: ("new", position) or ("existing", id)
        for i, item in enumerate(batch):
            best_score, best = -1.0, None
            hits = store.search_vector(
                item_vectors[i], k=1, scope=item.scope if item.scope is not None else UNSCOPED, key="item"
            )
            if hits:
                best_score, best = hits[0][1], ("existing", hits[0][0].id)
            same_scope = [j for j in new_rows if batch[j].scope == item.scope]
            if same_scope:
                scores = item_vectors[same_scope] @ item_vectors[i]
                j = int(np.argmax(scores))
                if float(scores[j]) > best_score:
                    best_score, best = float(scores[j]), ("new", same_scope[j])
            if best is not None and best_score >= self.threshold:
                kind, ref = best
                if kind == "existing":
                    current = merged.get(ref) or hits[0][0]
                    merged[ref] = _merge(current, item)
                else:
                    batch[ref] = _merge(batch[ref], item)
                target.append(best)
            else:
                new_rows.append(i)
                target.append(("new", i))
        added = [batch[i] for i in new_rows]
        if added:
            store.add_embedded(added, task_vectors[new_rows], item_vectors[new_rows])
        stored: dict[str, MemoryItem] = {}
        for existing_id, item in merged.items():
            try:
                stored[existing_id] = store.update(item)
            except KeyError:  # removed by someone else meanwhile: keep the lesson as a new item
                store.add(item)
                stored[existing_id] = item
        return [batch[ref] if kind == "new" else stored[ref] for kind, ref in target]

    def __repr__(self) -> str:
        return f"DedupPolicy(threshold={self.threshold})"


def _merge(existing: MemoryItem, new: MemoryItem) -> MemoryItem:
    """`existing` with `new`'s provenance entries appended (text, id, scope and usage kept)."""
    return existing.model_copy(update={"provenance": [*existing.provenance, *new.provenance]})


def make_policy(policy: str | Any = "append") -> ConsolidationPolicy:
    """ "append" | "dedup" | a policy object (anything with `apply(store, items)`) -> a policy."""
    if isinstance(policy, str):
        name = policy.strip().lower()
        if name == "append":
            return AppendPolicy()
        if name == "dedup":
            return DedupPolicy()
        raise ValueError(
            f"Unknown consolidation policy {policy!r}: use 'append' (the paper's default), 'dedup', or a policy object."
        )
    if callable(getattr(policy, "apply", None)):
        return policy
    raise ValueError(
        "Consolidation policy must be 'append', 'dedup' or an object with apply(store, items); "
        f"got {type(policy).__name__}."
    )
