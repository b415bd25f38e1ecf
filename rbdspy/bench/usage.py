"""LM calls and tokens spent on one task, whoever made them (the agent's steps, the judge, the
extractors, MaTTS's copies of the LM).

Read from DSPy's global LM history, which every LM (and every copy of one) appends to with the
provider's token usage. A thread-local `dspy.track_usage()` would miss calls made in worker
threads. An LM that reports no usage (DummyLM) counts its calls with zero tokens.
"""

from __future__ import annotations

from dspy.clients import base_lm


def _tokens(usage: dict, *names: str) -> int:
    for name in names:
        value = usage.get(name)
        if value:
            return int(value)
    return 0


class TaskUsage:
    """`with TaskUsage() as usage: ...` then `usage.calls`, `usage.prompt_tokens`,
    `usage.completion_tokens`."""

    def __enter__(self) -> TaskUsage:
        self._seen = {id(entry) for entry in base_lm.GLOBAL_HISTORY}
        self.calls = self.prompt_tokens = self.completion_tokens = 0
        return self

    def __exit__(self, *exc) -> None:
        for entry in base_lm.GLOBAL_HISTORY:
            if id(entry) in self._seen:
                continue
            usage = entry.get("usage") or {}
            self.calls += 1
            self.prompt_tokens += _tokens(usage, "prompt_tokens", "input_tokens")
            self.completion_tokens += _tokens(usage, "completion_tokens", "output_tokens")
