"""Exact top-k by cosine: a half-precision scan picks candidates, float32 vectors decide.

Kept apart from the store because it is pure FAISS/numpy. A single query over 100k x 384 float32
vectors is memory-bandwidth bound (154 MB read per query), so the index scanned holds a float16
copy (FAISS `IndexScalarQuantizer`, QT_fp16: half the bytes). Its scores are approximate, but
their error has a rigorous bound B (`score_error_bound`), so the exact answer is recovered:

- Let t be the k-th best approximate score. k items score >= t approximately, so >= t - B
  exactly; hence every item of the exact top-k (and every item tied with its last one) has an
  exact score >= t - B and an approximate one >= t - 2B.
- So the scan fetches (doubling while needed) until the last fetched approximate score falls
  below t - window, window = 2B plus slack for float32 rounding, and every fetched item above
  t - window (never fewer than k + a small tie margin) is re-scored exactly from its float32
  vector, the source of truth.

Exact scores are computed in float64 (products of float32 values are exact there) and rounded to
float32; equal scores are ordered by row id (insertion order), so a store whose FAISS order changed
after updates answers exactly like the same store reopened. A scope is applied before the top-k is
taken (a post-filtered global top-k could return fewer than k items of the scope, or the wrong ones).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import faiss
import numpy as np

__all__ = [
    "best_first",
    "exact_scores",
    "is_scan_index",
    "new_scan_index",
    "scoped_search",
    "search_with_ties",
    "search_window",
]

# A scope holding at least this share of the items is searched "global first": when the global
# top-W already settles the scope's top k (see scoped_search), that is the answer. It is cheaper
# than FAISS's per-id selector, which touches every id; small scopes, or a global top-W that
# falls short, use the selector.
_GLOBAL_FIRST_SHARE = 0.25
_TIE_MARGIN = 8  # fetched and re-scored beyond k, so items tied at the boundary are usually seen at once

# rescore(pks) -> (pks, exact scores) of those rows; the order may differ from the request's.
Rescorer = Callable[[Sequence[int]], tuple[np.ndarray, np.ndarray]]


def new_scan_index(dim: int) -> faiss.Index:
    """The index scanned by a search: float16 codes, inner product, row ids as FAISS ids."""
    return faiss.IndexIDMap2(faiss.IndexScalarQuantizer(dim, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT))


def is_scan_index(index: Any) -> bool:
    """Whether `index` (e.g. read from a file) is of the kind `new_scan_index` makes: the error
    bound below holds only for float16 codes."""
    if not isinstance(index, faiss.IndexIDMap2):
        return False
    inner = faiss.downcast_index(index.index)
    return (
        isinstance(inner, faiss.IndexScalarQuantizer)
        and inner.sq.qtype == faiss.ScalarQuantizer.QT_fp16
        and inner.metric_type == faiss.METRIC_INNER_PRODUCT
    )


def score_error_bound(dim: int) -> float:
    """A rigorous bound on |approximate - exact| inner product of two float32-normalised vectors
    (norm within `norm_slack` of 1, or zero), one stored as float16, accumulated in float32.

    - float16 storage: each component x is stored with error <= 2^-10 |x| (2^-11 when rounded to
      nearest; the bound also covers truncation) or <= 2^-24 below the normal range, so the
      error of sum(q_i x_i) is <= 2^-10 |q| |x| + 2^-24 sqrt(dim) |q| (Cauchy-Schwarz).
    - float32 accumulation of dim products in any order: <= gamma(dim + 1) sum|q_i x~_i|, with
      gamma(m) = m u / (1 - m u), u = 2^-24.
    """
    u = 2.0**-24
    norm = 1.0 + norm_slack(dim)
    gamma = (dim + 1) * u / (1.0 - (dim + 1) * u)
    bound = 2.0**-10 * norm * norm + 2.0**-24 * math.sqrt(dim) * norm + gamma * norm * norm * (1.0 + 2.0**-10)
    return bound * 1.01


def norm_slack(dim: int) -> float:
    """A bound on | |v| - 1 | for a vector normalised in float32 (norm and division rounded)."""
    return (dim + 2) * 2.0**-24


def search_window(dim: int) -> float:
    """How far below the k-th approximate score a candidate may be and still belong to the exact
    top-k: 2B, plus slack for the float32 rounding of exact scores and their clipping at 1.0
    (scores of vectors whose norm rounds slightly above 1)."""
    return 2.0 * score_error_bound(dim) + 2.0 * norm_slack(dim) + 2.0**-22


def exact_scores(vectors: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Cosines of unit float32 vectors with the unit query: computed in float64 (each product is
    exact), the same way for every row (identical vectors score identically wherever they sit),
    rounded to float32 and clipped to 1.0 against rounding."""
    scores = (vectors.astype(np.float64) * query.astype(np.float64).reshape(1, -1)).sum(axis=1)
    return np.minimum(scores.astype(np.float32), np.float32(1.0))


def approximate_search(
    index: faiss.Index, query: np.ndarray, top: int, params: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """FAISS's top-`top` by approximate score as (row ids, scores), best first."""
    previous_threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)  # a single query: threads cost more than they save
    try:
        scores, ids = index.search(query, top, params=params)
    finally:
        faiss.omp_set_num_threads(previous_threads)
    found = ids[0] >= 0
    return ids[0][found], scores[0][found].astype(np.float64)  # compared with float64 thresholds


def best_first(pks: np.ndarray, scores: np.ndarray, top: int) -> list[tuple[int, float]]:
    """Best first; equal scores in row-id (insertion) order."""
    order = np.lexsort((pks, -scores.astype(np.float64)))[:top]
    return [(int(pks[i]), float(scores[i])) for i in order]


def _rescored(
    ids: np.ndarray, approx: np.ndarray, boundary: float, top: int, window: float, rescore: Rescorer
) -> list[tuple[int, float]]:
    """Exact top-`top` of the fetched items whose approximate score is within `window` of the
    `boundary` (the k-th approximate score); at least the first top + _TIE_MARGIN are re-scored."""
    keep = max(int(np.count_nonzero(approx >= boundary - window)), min(len(ids), top + _TIE_MARGIN))
    pks, scores = rescore(ids[:keep].tolist())
    return best_first(pks, scores, top)


def search_with_ties(
    index: faiss.Index,
    query: np.ndarray,
    top: int,
    available: int,
    window: float,
    rescore: Rescorer,
    params: Any = None,
) -> list[tuple[int, float]]:
    """The exact top-`top` among the `available` items the index (and `params`' selector) offers:
    fetch top + _TIE_MARGIN, doubling while the last fetched approximate score is still within
    `window` of the top-th, then re-score the candidates exactly. Items learned on the same task
    share their task vector, so exact ties are common with key="task"; they are all fetched."""
    fetch = min(available, top + _TIE_MARGIN)
    while True:
        ids, approx = approximate_search(index, query, fetch, params)
        if fetch >= available or len(ids) < fetch or approx[-1] < approx[top - 1] - window:
            break
        fetch = min(available, fetch * 2)
    if len(ids) < top:
        return _rescored(ids, approx, -math.inf, top, window, rescore)
    return _rescored(ids, approx, float(approx[top - 1]), top, window, rescore)


def scoped_search(
    index: faiss.Index, query: np.ndarray, top: int, members: np.ndarray, params: Any, window: float, rescore: Rescorer
) -> list[tuple[int, float]]:
    """Exact top-`top` among `members` (sorted row ids): the scope filter applies before top-k."""
    share = len(members) / max(index.ntotal, 1)
    if share >= _GLOBAL_FIRST_SHARE:
        wide = min(index.ntotal, max(4 * top, int(np.ceil(2 * top / share))) + _TIE_MARGIN)
        ids, approx = approximate_search(index, query, wide)
        where = np.searchsorted(members, ids).clip(max=len(members) - 1)
        inside = members[where] == ids
        chosen, chosen_approx = ids[inside], approx[inside]
        # Exact when every item was seen, or when every member not fetched scores (approximately)
        # below the scope's top-th by more than the window.
        if len(ids) == index.ntotal:
            return _rescored(
                chosen, chosen_approx, float(chosen_approx[min(top, len(chosen)) - 1]), top, window, rescore
            )
        if len(chosen) >= top and approx[-1] < chosen_approx[top - 1] - window:
            return _rescored(chosen, chosen_approx, float(chosen_approx[top - 1]), top, window, rescore)
    return search_with_ties(index, query, top, len(members), window, rescore, params)
