"""How likely an LM finds one of two answers, read from the logprobs of the token it wrote: a
small model's written word is mostly its bias (the embedded 1.5B model writes "failure" for most
successes, "no" to most questions), while the probability it gives one answer against the other
still ranks the cases, so a threshold chosen on labelled data can decide."""

from __future__ import annotations

import math
from typing import Any

import dspy

TOP_LOGPROBS = 20  # alternatives asked for at each token: the losing answer is among them


def _normalised(token: str) -> str:
    return token.strip().strip("\"'`").strip().lower()


def _matches(token: str, label: str) -> bool:
    """A token that starts `label` (two characters at least, so a lone quote or letter is not one)."""
    text = _normalised(token)
    return len(text) >= 2 and label.startswith(text)


def label_probability(logprobs: Any, labels: tuple[str, str]) -> float | None:
    """P(labels[0]) / (P(labels[0]) + P(labels[1])) at the first generated token that starts either
    label, from that token's alternatives (OpenAI-shaped `{"content": [{token, logprob,
    top_logprobs}]}`, as DSPy puts on a Prediction). None when no token starts a label."""
    entries = logprobs.get("content") if isinstance(logprobs, dict) else logprobs
    for entry in entries or []:
        if not isinstance(entry, dict) or not any(_matches(str(entry.get("token", "")), label) for label in labels):
            continue
        mass = dict.fromkeys(labels, 0.0)
        seen = set()
        for alt in [*(entry.get("top_logprobs") or []), entry]:
            token = str(alt.get("token", ""))
            if token in seen:
                continue
            seen.add(token)
            for label in labels:
                if _matches(token, label):
                    mass[label] += math.exp(float(alt.get("logprob", -math.inf)))
        total = sum(mass.values())
        return mass[labels[0]] / total if total > 0 else None
    return None


def with_logprobs(predictor: Any, inputs: dict) -> dict:
    """The call's inputs, asking for logprobs where the LM in effect takes them (an LM whose
    provider has none, such as Anthropic's, is asked for the word alone)."""
    lm = getattr(predictor, "lm", None) or dspy.settings.lm
    params = getattr(lm, "supported_params", None)
    if params is not None and "logprobs" not in params:
        return inputs
    return {**inputs, "config": {"logprobs": True, "top_logprobs": TOP_LOGPROBS}}
