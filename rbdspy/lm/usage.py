"""Counting what a piece of work spent on LMs: calls and tokens, whoever made them (an agent's
steps, the judge, the extractors, MaTTS's copies of the LM, an optimizer's proposer or
reflection LM). The benchmark counts one task with it, a compile or an eval one run.

Read from DSPy's global LM history, which every LM (and every copy of one) appends to with the
provider's token usage. `dspy.track_usage()` would miss calls made in worker threads: its tracker
is copied into each thread and never merged back. An LM that reports no usage (DummyLM) counts
its calls with zero tokens.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from dspy.clients import base_lm

__all__ = ["LmUsage", "Spend"]


def _tokens(usage: dict, *names: str) -> int:
    for name in names:
        value = usage.get(name)
        if value:
            return int(value)
    return 0


@dataclass
class Spend:
    """LM calls and tokens of one kind of call."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


class LmUsage:
    """`with LmUsage() as usage: ...` then `usage.calls`, `usage.prompt_tokens`,
    `usage.completion_tokens`, or `usage.totals()` for them as MLflow metrics.

    With `classify` (history entry -> a kind, e.g. "agent" or "loop"), `usage.by_kind` also
    splits the spend by kind."""

    def __init__(self, classify: Callable[[dict], str] | None = None):
        self.classify = classify

    def __enter__(self) -> LmUsage:
        self._seen = {id(entry) for entry in base_lm.GLOBAL_HISTORY}
        self.entries: list[dict] = []
        self.calls = self.prompt_tokens = self.completion_tokens = 0
        self.by_kind: dict[str, Spend] = defaultdict(Spend)
        return self

    def __exit__(self, *exc) -> None:
        self.entries = [entry for entry in base_lm.GLOBAL_HISTORY if id(entry) not in self._seen]
        for entry in self.entries:
            usage = entry.get("usage") or {}
            prompt = _tokens(usage, "prompt_tokens", "input_tokens")
            completion = _tokens(usage, "completion_tokens", "output_tokens")
            self.calls += 1
            self.prompt_tokens += prompt
            self.completion_tokens += completion
            if self.classify is not None:
                spend = self.by_kind[self.classify(entry)]
                spend.calls += 1
                spend.prompt_tokens += prompt
                spend.completion_tokens += completion

    def totals(self) -> dict[str, float]:
        """{"lm_calls", "lm_prompt_tokens", "lm_completion_tokens"} as floats (MLflow metrics)."""
        return {
            "lm_calls": float(self.calls),
            "lm_prompt_tokens": float(self.prompt_tokens),
            "lm_completion_tokens": float(self.completion_tokens),
        }
