"""Exact top-k over the store's FAISS indexes, with scope filtering before top-k and stable ties.

Kept apart from the store because it is pure FAISS/numpy: given an index of unit vectors, a
query and (for a scope) the sorted row ids allowed, return the exact best (row id, cosine) pairs.
Two details make results reproducible and correct: a scope is applied before the top-k is taken
(a post-filtered global top-k could return fewer than k items of the scope, or the wrong ones),
and equal scores are ordered by row id, so a store whose FAISS order changed after updates
answers exactly like the same store reopened.
"""

from __future__ import annotations

from typing import Any

import faiss
import numpy as np

__all__ = ["faiss_search", "scoped_search", "search_with_ties"]

# A scope holding at least this share of the items is searched "global first": when the global
# top-W already contains k items of the scope, those are exactly the scope's top k (any other item
# of the scope scores below all W). It is cheaper than FAISS's per-id selector, which touches every
# id; small scopes, or a global top-W that falls short, use the selector.
_GLOBAL_FIRST_SHARE = 0.25
_TIE_MARGIN = 8


def faiss_search(index: faiss.Index, query: np.ndarray, top: int, params: Any = None) -> list[tuple[int, float]]:
    """FAISS's top-`top` as (row id, score), best first."""
    previous_threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)  # a single query: threads cost more than they save
    try:
        scores, ids = index.search(query, top, params=params)
    finally:
        faiss.omp_set_num_threads(previous_threads)
    # Cosines of unit vectors, clipped to 1.0 against float rounding.
    return [(int(pk), min(float(score), 1.0)) for score, pk in zip(scores[0], ids[0]) if pk >= 0]


def _best(hits: list[tuple[int, float]], top: int) -> list[tuple[int, float]]:
    """Best first; equal scores in row-id (insertion) order, so ties break the same way
    whatever order the vectors sit in inside FAISS (which changes with updates and rebuilds)."""
    return sorted(hits, key=lambda hit: (-hit[1], hit[0]))[:top]


def search_with_ties(index: faiss.Index, query: np.ndarray, top: int, available: int, params: Any = None) -> list[tuple[int, float]]:
    """The exact top-`top`, fetching a few more than asked (doubling while the last fetched
    score still equals the top-th) so that items tied at the boundary are all seen. Items
    learned on the same task share their task vector, so exact ties are common with key="task"."""
    fetch = min(available, top + _TIE_MARGIN)
    while True:
        hits = faiss_search(index, query, fetch, params)
        if fetch >= available or len(hits) < fetch or hits[-1][1] < hits[top - 1][1]:
            return _best(hits, top)
        fetch = min(available, fetch * 2)


def scoped_search(index: faiss.Index, query: np.ndarray, top: int, members: np.ndarray, params: Any) -> list[tuple[int, float]]:
    """Exact top-`top` among `members` (sorted row ids): the scope filter applies before top-k."""
    share = len(members) / max(index.ntotal, 1)
    if share >= _GLOBAL_FIRST_SHARE:
        wide = min(index.ntotal, max(4 * top, int(np.ceil(2 * top / share))) + _TIE_MARGIN)
        hits = faiss_search(index, query, wide)
        pks = np.fromiter((pk for pk, _ in hits), dtype=np.int64, count=len(hits))
        where = np.searchsorted(members, pks).clip(max=len(members) - 1)
        chosen = [hit for hit, inside in zip(hits, members[where] == pks) if inside]
        # Exact when every item was seen, or when k members were found and the rest score lower.
        if wide == index.ntotal or (len(chosen) >= top and hits[-1][1] < chosen[top - 1][1]):
            return _best(chosen, top)
    return search_with_ties(index, query, top, len(members), params)
