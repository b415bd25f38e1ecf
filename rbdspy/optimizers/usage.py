"""Counting what a compile spent: metric calls here; LM calls and tokens with `LmUsage`
(rbdspy/lm/usage.py, shared with the benchmark and re-exported here)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from rbdspy.lm.usage import LmUsage

__all__ = ["CountingMetric", "LmUsage"]


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
