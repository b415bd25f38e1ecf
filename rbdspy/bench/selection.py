"""The test-time view of MaTTS parallel (the paper's best-of-k): on the measured tasks, how often the
rollout the selector took won, beside the first rollout alone (k = 1) and any rollout (an oracle
selector, pass@k). Read from a run's records, which keep each rollout's outcome (`rollouts`) and
the selector's pick (`chosen`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from rbdspy.bench.stats import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, paired_bootstrap


def selection_view(
    records: Iterable[dict[str, Any]],
    phase: str = "measure",
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> dict[str, Any] | None:
    """Counts over an arm's records of `phase` that played rollouts: `n`, `first` (the first
    rollout won), `selected` (the chosen one won), `oracle` (any won), and `recovered`: the share of
    the oracle's gain over the first rollout that the selector kept (None where the oracle gains
    nothing). With them, the uncertainty over tasks: `selector_gain`, the paired bootstrap of
    selected minus first per task, and `recovered_interval`, the percentile interval of `recovered`
    over the same resamples of tasks (those where the oracle gains nothing left out; None where
    fewer than half keep a gain). None where no record played rollouts."""
    rows = [r for r in records if r.get("phase") == phase and r.get("rollouts")]
    if not rows:
        return None
    first = np.array([bool(r["rollouts"][0]) for r in rows], dtype=float)
    picked = np.array([_picked(r) for r in rows], dtype=float)
    oracle = np.array([any(r["rollouts"]) for r in rows], dtype=float)
    gain = oracle.sum() - first.sum()
    return {
        "n": len(rows),
        "k": max(len(r["rollouts"]) for r in rows),
        "first": int(first.sum()),
        "selected": int(picked.sum()),
        "oracle": int(oracle.sum()),
        "recovered": float((picked.sum() - first.sum()) / gain) if gain else None,
        "selector_gain": paired_bootstrap(picked, first, n_resamples=n_resamples, seed=seed),
        "recovered_interval": _recovered_interval(first, picked, oracle, n_resamples, seed),
    }


def _recovered_interval(
    first: np.ndarray, picked: np.ndarray, oracle: np.ndarray, n_resamples: int, seed: int
) -> list[float] | None:
    """The percentile interval of (selected - first) / (oracle - first) over resamples of tasks."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, first.size, size=(n_resamples, first.size))
    kept, gained = (picked - first)[idx].sum(axis=1), (oracle - first)[idx].sum(axis=1)
    ratios = kept[gained > 0] / gained[gained > 0]
    if ratios.size < n_resamples / 2:
        return None
    tail = (1.0 - DEFAULT_CONFIDENCE) / 2.0
    low, high = np.quantile(ratios, [tail, 1.0 - tail])
    return [float(low), float(high)]


def _picked(record: dict[str, Any]) -> bool:
    """Whether the rollout the selector took won (False where it took none, or the index is not one)."""
    chosen, rollouts = record.get("chosen"), record["rollouts"]
    return isinstance(chosen, int) and 0 <= chosen < len(rollouts) and bool(rollouts[chosen])
