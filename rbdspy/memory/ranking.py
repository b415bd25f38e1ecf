"""How a stored item earns or loses its place: a usefulness value learned from the outcomes of the
tasks it was served on, a rank score that joins that value to similarity, and the rule that
retires an item that is confidently harmful.

Similarity alone cannot tell a lesson that helps from one that misleads: both were learned on
similar tasks. What can is credit: each time an item is served, the task's outcome (the
environment's when trusted, else the judge's verdict) moves the item's value toward 1 (success) or
0 (failure), as a bandit's action value would (MemRL's Q-values; ACE's helpful/harmful
counters). A new item starts optimistic, so it is tried before it is judged.

Retirement is deliberately conservative: an item is retired only when, after at least
`MIN_EVIDENCE` decided uses, even the optimistic end of a 90% Wilson interval on its success rate
stays below the bank's base rate (the success rate of every task the bank recorded). A retired
item is kept, visible and restorable; it is only no longer served.
"""

from __future__ import annotations

import math

OPTIMISTIC_VALUE = 1.0  # a new item ranks as if it had always helped, so it gets tried
LEARNING_RATE = 0.3  # how far one outcome moves the value: about the last 3-5 uses dominate
UTILITY_WEIGHT = 0.2  # rank = similarity + weight * (value - 0.5): reorders near-equals, never the unrelated
MIN_EVIDENCE = 5  # decided uses before an item can be retired
MIN_BASE_EPISODES = 8  # decided tasks the bank needs before its base rate is trusted
WILSON_Z = 1.645  # a one-sided 95% (two-sided 90%) interval


def updated_value(value: float, outcome: bool) -> float:
    """The value after one more task with this item served ended in `outcome`."""
    return value + LEARNING_RATE * (float(outcome) - value)


def rank_score(similarity: float, value: float, weight: float = UTILITY_WEIGHT) -> float:
    return similarity + weight * (value - 0.5)


def wilson_upper(successes: int, n: int, z: float = WILSON_Z) -> float:
    """The upper end of the Wilson score interval for a success rate of successes/n."""
    if n <= 0:
        return 1.0
    p = successes / n
    denominator = 1 + z * z / n
    centre = p + z * z / (2 * n)
    margin = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return min(1.0, (centre + margin) / denominator)


def confidently_harmful(successes: int, failures: int, base_rate: float | None) -> bool:
    """Whether an item served on `successes + failures` decided tasks did confidently worse than
    the bank's base rate (None: not enough tasks recorded to know)."""
    n = successes + failures
    if base_rate is None or n < MIN_EVIDENCE:
        return False
    return wilson_upper(successes, n) < base_rate
