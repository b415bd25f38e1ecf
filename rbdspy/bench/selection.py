"""The test-time view of MaTTS parallel (the paper's best-of-k): on the measured tasks, how often the
rollout the selector took won, beside the first rollout alone (k = 1) and any rollout (an oracle
selector, pass@k). Read from a run's records, which keep each rollout's outcome (`rollouts`) and
the selector's pick (`chosen`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from rbdspy.bench.stats import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, paired_bootstrap

MIN_GAIN_TASKS = 5  # fewer tasks where the oracle gains give a ratio interval of no width: none is given


def selection_view(
    records: Iterable[dict[str, Any]],
    phase: str = "measure",
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> dict[str, Any] | None:
    """Counts over an arm's records of `phase` that played rollouts: `n`, `first` (the first
    rollout won), `selected` (the chosen one won), `oracle` (any won), `gain_tasks` (the first
    lost and another won), and `recovered`: the oracle's gain over the first rollout that the
    selector kept, (selected - first) / (oracle - first), None where the oracle gains nothing; it is
    at most 1 and below 0 where the selector gave up more of the first rollout's wins than it found.

    With them, the uncertainty over tasks, from resamples of tasks drawn with `seed`:
    `selector_gain`, the paired bootstrap of selected minus first, and `recovered_interval`, the
    percentile interval of `recovered` over the resamples where the oracle gains (None with fewer
    than `MIN_GAIN_TASKS` gain tasks: every resample would hold the same few). None where no record
    played rollouts."""
    rows = [r for r in records if r.get("phase") == phase and r.get("rollouts")]
    if not rows:
        return None
    first = np.array([bool(r["rollouts"][0]) for r in rows], dtype=float)
    picked = np.array([_picked(r) for r in rows], dtype=float)
    oracle = np.array([any(r["rollouts"]) for r in rows], dtype=float)
    gain_tasks = int(oracle.sum() - first.sum())  # the oracle wins wherever the first rollout does
    enough = gain_tasks >= MIN_GAIN_TASKS
    return {
        "n": len(rows),
        "k": max(len(r["rollouts"]) for r in rows),
        "first": int(first.sum()),
        "selected": int(picked.sum()),
        "oracle": int(oracle.sum()),
        "gain_tasks": gain_tasks,
        "recovered": float((picked.sum() - first.sum()) / gain_tasks) if gain_tasks else None,
        "selector_gain": paired_bootstrap(picked, first, n_resamples=n_resamples, seed=seed),
        "recovered_interval": _recovered_interval(first, picked, oracle, n_resamples, seed) if enough else None,
    }


def _recovered_interval(
    first: np.ndarray, picked: np.ndarray, oracle: np.ndarray, n_resamples: int, seed: int
) -> list[float]:
    """The percentile interval of (selected - first) / (oracle - first) over resamples of tasks
    (drawn as `paired_bootstrap` draws them) where the oracle gains."""
    idx = np.random.default_rng(seed).integers(0, first.size, size=(n_resamples, first.size))
    kept, gained = (picked - first)[idx].sum(axis=1), (oracle - first)[idx].sum(axis=1)
    ratios = kept[gained > 0] / gained[gained > 0]
    tail = (1.0 - DEFAULT_CONFIDENCE) / 2.0
    low, high = np.quantile(ratios, [tail, 1.0 - tail])
    return [float(low), float(high)]


def _picked(record: dict[str, Any]) -> bool:
    """Whether the rollout the selector took won (False where it took none, or the index is not one)."""
    chosen, rollouts = record.get("chosen"), record["rollouts"]
    return isinstance(chosen, int) and 0 <= chosen < len(rollouts) and bool(rollouts[chosen])
