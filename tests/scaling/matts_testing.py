"""Scripted LMs and agents for the MaTTS tests.

`RolloutLM` is a dict-mode DummyLM (safe for concurrent calls) whose copies answer by their
rollout id, as a sampling LM's rollouts would differ. `CallRecorder` records every LM call's
rollout id, temperature and last message, copies included.
"""

from __future__ import annotations

import dspy
from dspy.utils import DummyLM
from dspy.utils.callback import BaseCallback

JUDGE_OK = {"rationale": "the answer is right", "verdict": "success"}
JUDGE_FAIL = {"rationale": "the answer is wrong", "verdict": "failure"}


def lessons(*titles):
    return {
        "lessons": [
            {"title": t, "description": f"When {t.lower()} applies.", "content": f"Apply {t.lower()}."} for t in titles
        ]
    }


def script(select=None, contrast=None, extract=None, refine=None, judge=None):
    """Answers keyed on what only one kind of call contains (dict order decides)."""
    answers = {}
    if select is not None:
        answers["## best_index ##"] = select
    if contrast is not None:
        answers["## attempts ##"] = contrast
    if extract is not None:
        answers["## judge_rationale ##"] = extract
    if refine is not None:
        answers["## notes ##"] = refine
    # The judge sees the agent's answer in the trajectory it is shown (a refined trajectory's
    # last action, which the judge's window of one action shows alone, ends "Answer now: ...").
    verdicts = {"answer: right": JUDGE_OK, "answer: wrong": JUDGE_FAIL}
    verdicts |= {"now: right": JUDGE_OK, "now: wrong": JUDGE_FAIL}
    answers.update(judge or verdicts)
    return answers


class RolloutLM(DummyLM):
    """Copies made for a rollout in `by_rollout` answer the agent's output `field` with its value."""

    def __init__(self, answers, by_rollout=None, field="answer"):
        super().__init__(answers)
        self.by_rollout = by_rollout or {}
        self.field = field

    def copy(self, **kwargs):
        copied = super().copy(**kwargs)
        rollout_id = copied.kwargs.get("rollout_id")
        if rollout_id in self.by_rollout:
            copied.answers = {f"## {self.field} ##": {self.field: self.by_rollout[rollout_id]}}
        return copied


class CallRecorder(BaseCallback):
    """Records every LM call: (rollout_id, temperature, last message)."""

    def __init__(self):
        self.calls = []

    def on_lm_start(self, call_id, instance, inputs):
        messages = inputs.get("messages") or []
        last = messages[-1]["content"] if messages else str(inputs.get("prompt"))
        self.calls.append((instance.kwargs.get("rollout_id"), instance.kwargs.get("temperature"), last))

    def agent_calls(self):
        return [c for c in self.calls if "## answer ##" in c[2]]

    def other_calls(self):
        return [c for c in self.calls if "## answer ##" not in c[2]]


class Agent(dspy.Module):
    """task, memory -> answer, remembering each memory block it was shown."""

    def __init__(self):
        super().__init__()
        self.predict = dspy.Predict("task, memory -> answer")
        self.memories_seen = []

    def forward(self, task, memory):
        self.memories_seen.append(memory)
        return self.predict(task=task, memory=memory)

    async def aforward(self, task, memory):
        self.memories_seen.append(memory)
        return await self.predict.acall(task=task, memory=memory)
