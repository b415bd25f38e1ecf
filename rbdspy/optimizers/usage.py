"""Counting what a compile spent: LM calls and tokens (per model) and metric calls.

LM usage is read from DSPy's global LM history rather than `dspy.track_usage()`, whose tracker is
copied into each worker thread and never merged back, so threaded evaluations and optimizers
would go uncounted. Every LM call (the program's, the proposer's, the reflection LM's, copies
made by optimizers) appends one history entry with its token usage.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from dspy.clients import base_lm


class LmUsage:
    """`with LmUsage() as usage: ...` then `usage.totals()`."""

    def __enter__(self) -> LmUsage:
        self._seen = {id(entry) for entry in base_lm.GLOBAL_HISTORY}
        self.entries: list[dict] = []
        return self

    def __exit__(self, *exc) -> None:
        self.entries = [entry for entry in base_lm.GLOBAL_HISTORY if id(entry) not in self._seen]

    def totals(self) -> dict[str, float]:
        out = {"lm_calls": 0.0, "lm_prompt_tokens": 0.0, "lm_completion_tokens": 0.0}
        for entry in self.entries:
            usage = entry.get("usage") or {}
            out["lm_calls"] += 1
            out["lm_prompt_tokens"] += float(usage.get("prompt_tokens") or usage.get("input_tokens") or 0)
            out["lm_completion_tokens"] += float(usage.get("completion_tokens") or usage.get("output_tokens") or 0)
        return out


class CountingMetric:
    """Wraps a metric and counts its calls (thread-safe): `calls` scored a program run (the
    budget actually spent), `feedback_calls` only asked GEPA's per-predictor feedback on a run
    already scored. Keeps DSPy's five-argument metric signature, which GEPA checks."""

    def __init__(self, metric: Callable):
        self.metric = metric
        self.calls = 0
        self.feedback_calls = 0
        self._lock = threading.Lock()
        self.__name__ = getattr(metric, "__name__", "metric")

    def __call__(self, gold, pred, trace=None, pred_name=None, pred_trace=None) -> Any:
        with self._lock:
            if pred_name is None:
                self.calls += 1
            else:
                self.feedback_calls += 1
        if pred_name is None and pred_trace is None:
            return self.metric(gold, pred, trace)
        return self.metric(gold, pred, trace, pred_name, pred_trace)
