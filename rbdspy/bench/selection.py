"""The test-time view of MaTTS parallel (the paper's best-of-k): on the measured tasks, how often the
rollout the selector took won, beside the first rollout alone (k = 1) and any rollout (an oracle
selector, pass@k). Read from a run's records, which keep each rollout's outcome (`rollouts`) and
the selector's pick (`chosen`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def selection_view(records: Iterable[dict[str, Any]], phase: str = "measure") -> dict[str, Any] | None:
    """Counts over an arm's records of `phase` that played rollouts: `n`, `first` (the first
    rollout won), `selected` (the chosen one won), `oracle` (any won), and `recovered`: the share of
    the oracle's gain over the first rollout that the selector kept (None where the oracle gains
    nothing). None where no record played rollouts."""
    rows = [r for r in records if r.get("phase") == phase and r.get("rollouts")]
    if not rows:
        return None
    first = sum(1 for r in rows if r["rollouts"][0])
    selected = sum(1 for r in rows if _picked(r))
    oracle = sum(1 for r in rows if any(r["rollouts"]))
    gain = oracle - first
    return {
        "n": len(rows),
        "k": max(len(r["rollouts"]) for r in rows),
        "first": first,
        "selected": selected,
        "oracle": oracle,
        "recovered": (selected - first) / gain if gain else None,
    }


def _picked(record: dict[str, Any]) -> bool:
    """Whether the rollout the selector took won (False where it took none, or the index is not one)."""
    chosen, rollouts = record.get("chosen"), record["rollouts"]
    return isinstance(chosen, int) and 0 <= chosen < len(rollouts) and bool(rollouts[chosen])
