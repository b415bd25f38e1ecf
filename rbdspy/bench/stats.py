"""Per-arm summaries and the paired comparison with no-memory.

Every arm plays the same tasks in the same order, so arm A and no-memory can be compared task by
task: the per-task differences d_i = success_A(i) - success_0(i) cancel out how hard each task
is. The paired bootstrap resamples tasks (the same resample for both arms) and reads the 95%
interval of the mean difference off the resampled means. If the interval lies above 0 the lift
is unlikely to be luck on these tasks; if it straddles 0 the data cannot tell a lift from none.
With a dozen tasks the interval is wide: that is the honest answer for a small run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

DEFAULT_RESAMPLES = 10_000
DEFAULT_CONFIDENCE = 0.95


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = 0,
) -> dict[str, float]:
    """Mean of a - b over paired observations, with a percentile bootstrap interval.

    Returns {diff, low, high, n, p_le_zero}: `p_le_zero` is the share of resamples whose mean
    difference is <= 0 (a one-sided bootstrap p-value for "a is better than b")."""
    a_arr, b_arr = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a_arr.shape != b_arr.shape or a_arr.ndim != 1:
        raise ValueError(
            f"paired samples must be two 1-D sequences of the same length; got {a_arr.shape} and {b_arr.shape}"
        )
    if a_arr.size == 0:
        raise ValueError("paired_bootstrap needs at least one pair")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1); got {confidence}")
    d = a_arr - b_arr
    rng = np.random.default_rng(seed)
    means = d[rng.integers(0, d.size, size=(n_resamples, d.size))].mean(axis=1)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return {
        "diff": float(d.mean()),
        "low": float(low),
        "high": float(high),
        "n": int(d.size),
        "p_le_zero": float(np.mean(means <= 0)),
    }


def _mean(values: list[float]) -> float | None:
    return float(np.mean(values)) if values else None


def summarise(records: list[dict[str, Any]]) -> dict[str, Any]:
    """One arm's figures from its per-task records (see runner.task_record)."""
    measured = [r for r in records if r["phase"] == "measure"]
    build = [r for r in records if r["phase"] == "build"]
    successes = [r for r in records if r["success"]]
    n = len(records) or 1
    return {
        "n_tasks": len(records),
        "n_measured": len(measured),
        "success_rate": _mean([float(r["success"]) for r in records]),
        "success_rate_measured": _mean([float(r["success"]) for r in measured]),
        "success_rate_build": _mean([float(r["success"]) for r in build]),
        "mean_score": _mean([r["score"] for r in records]),
        "mean_score_measured": _mean([r["score"] for r in measured]),
        "mean_steps": _mean([r["steps"] for r in records]),
        "mean_steps_success": _mean([r["steps"] for r in successes]),
        "env_actions_per_task": sum(r.get("env_actions", r["steps"]) for r in records) / n,
        "lm_calls_per_task": sum(r["lm_calls"] for r in records) / n,
        "prompt_tokens_per_task": sum(r["prompt_tokens"] for r in records) / n,
        "completion_tokens_per_task": sum(r["completion_tokens"] for r in records) / n,
        "memories_written": sum(r["memories_added"] for r in records),
        "memories_used_per_task": sum(r["memories_used"] for r in records) / n,
        "wall_s": sum(r["wall_s"] for r in records),
        "wall_s_per_task": sum(r["wall_s"] for r in records) / n,
        "errors": sum(1 for r in records if r.get("error")),
    }


def compare(
    records: dict[str, list[dict[str, Any]]], baseline: str, seed: int = 0, n_resamples: int = DEFAULT_RESAMPLES
) -> dict[str, dict[str, Any]]:
    """Each arm against `baseline` on the tasks both played, on all tasks and on the measured
    ones: {arm: {"all": bootstrap, "measured": bootstrap or None}}."""
    if baseline not in records:
        return {}
    base = {r["index"]: r for r in records[baseline]}
    out: dict[str, dict[str, Any]] = {}
    for arm, rows in records.items():
        if arm == baseline:
            continue
        pairs = [(r, base[r["index"]]) for r in rows if r["index"] in base]
        result: dict[str, Any] = {}
        for tasks, keep in (("all", lambda r: True), ("measured", lambda r: r["phase"] == "measure")):
            chosen = [(a, b) for a, b in pairs if keep(a)]
            result[tasks] = (
                paired_bootstrap(
                    [float(a["success"]) for a, _ in chosen],
                    [float(b["success"]) for _, b in chosen],
                    seed=seed,
                    n_resamples=n_resamples,
                )
                if chosen
                else None
            )
        out[arm] = result
    return out
