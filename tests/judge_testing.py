"""A fake llama.cpp server for the probability judge: answers each question with a JSON verdict
whose label token carries a chosen P(success) in its logprobs, as the embedded engine returns them."""

from __future__ import annotations

import json
import math
import re

import dspy

from rbdspy.lm.local_engine import AsyncLlamaEngine, LlamaEngine


def entry(token, p, alternatives=()):
    return {
        "token": token,
        "logprob": math.log(p),
        "top_logprobs": [{"token": t, "logprob": math.log(q)} for t, q in alternatives],
    }


def verdict_reply(p_success):
    """A JSON verdict whose label token carries P(success) = p_success among the two labels."""
    label = "success" if p_success >= 0.5 else "failure"
    other = "failure" if label == "success" else "success"
    p_label = max(p_success, 1 - p_success)
    tokens = [entry('{"', 1.0), entry("verdict", 1.0), entry('":', 1.0), entry(' "', 1.0)]
    tokens.append(entry(label, p_label, [(label, p_label), (other, 1 - p_label), ("Success", 1e-6)]))
    return {
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": json.dumps({"verdict": label})},
                "logprobs": {"content": tokens},
            }
        ],
        "usage": {"prompt_tokens": 50, "completion_tokens": 8, "total_tokens": 58},
    }


class SignalServer:
    """Answers every question about a task with the P(success) its text carries as "signal NN"
    (NN percent): every view of a trajectory then scores the same, and the judge's P(success) is
    that signal. `model` names the LM, as a calibration records it."""

    def __init__(self):
        self.calls = 0

    def handle_chat_completions(self, body):
        self.calls += 1
        found = re.search(r"signal (\d+)", body["messages"][-1]["content"])
        return verdict_reply(int(found.group(1)) / 100 if found else 0.5)


def signal_lm(model: str = "local/fake") -> tuple[dspy.LM, SignalServer]:
    server = SignalServer()
    engine = LlamaEngine("local-fast", server=server)
    return dspy.LM(model, engine=engine, async_engine=AsyncLlamaEngine(engine)), server


def boiled_water():
    """A short trajectory every judge test can read: the water boils."""
    from rbdspy.types import Step, Trajectory

    return Trajectory(
        task="boil water",
        steps=[
            Step(role="env", content="A kitchen with a stove and a pot of water."),
            Step(role="agent", content="activate stove"),
            Step(role="env", content="The water boils."),
        ],
    )
