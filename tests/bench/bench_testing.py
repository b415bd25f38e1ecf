"""A scripted LM for the benchmark tests: dict-mode DummyLM (safe for MaTTS's copies), keyed on
the output-field instruction that only one kind of call carries, so every arm's calls get an
answer whatever order they come in."""

from __future__ import annotations

import io

import dspy
from dspy.utils import DummyLM
from rich.console import Console

LESSON = {
    "title": "Check the room first",
    "description": "When a task starts.",
    "content": "Look around before acting.",
}

# Dict order decides: the specific calls first, the agent's action last.
ANSWERS = {
    "fields: `rationale`, then `verdict`": {"rationale": "the goal was met", "verdict": "success"},
    "fields: `verdict`": {"verdict": "success"},  # the probability judge's questions
    "fields: `rationale`, then `best_index`": {"rationale": "attempt 0 is best", "best_index": 0},
    "fields: `notes`, then `refined_answer`": {"notes": "checked the steps", "refined_answer": "done"},
    "fields: `title`, then `when_to_use`, then `steps`": {
        "title": "Explore then act",
        "when_to_use": "Any search task.",
        "steps": ["look around", "take the {object}"],
    },
    "fields: `lessons`": {"lessons": [LESSON]},
    "fields: `action`": {"action": "look around"},
}


def judge_calls(actions: int) -> int:
    """The default judge's LM calls for a game trajectory of `actions` actions (its windows and
    action list, each distinct prompt once)."""
    from rbdspy.judge.probability import lm_calls
    from rbdspy.types import Step, Trajectory

    steps = [Step(role="env", content="A room.")]
    for _ in range(actions):
        steps += [Step(role="agent", content="look around"), Step(role="env", content="A room.")]
    return lm_calls(Trajectory(task="t", steps=steps))


def scripted_lm(answers: dict | None = None) -> DummyLM:
    return DummyLM(dict(answers or ANSWERS), adapter=dspy.JSONAdapter())


def agent_prompt(messages) -> bool:
    return bool(messages) and "fields: `action`" in messages[-1]["content"]


class CallCounter:
    """A DSPy callback counting LM calls, and the agent's (action) calls among them."""

    def __init__(self):
        self.calls = 0
        self.agent_calls = 0
        self.cache_settings = set()  # the `cache` flag of every LM that was called

    def as_callback(self):
        from dspy.utils.callback import BaseCallback

        counter = self

        class _Callback(BaseCallback):
            def on_lm_start(self, call_id, instance, inputs):
                counter.calls += 1
                counter.cache_settings.add(getattr(instance, "cache", None))
                counter.agent_calls += agent_prompt(inputs.get("messages") or [])

        return _Callback()


def quiet_bench(env, out, embedder, arms: str, answers: dict | None = None, **options):
    """`run_bench` on the scripted LM (its `answers`, default ANSWERS) and an open environment,
    with no MLflow and no console."""
    from rbdspy.bench import run_bench

    return run_bench(
        scripted_lm(answers),
        embedder,
        out,
        arms=arms,
        environment=env,
        mlflow=False,
        console=Console(file=io.StringIO()),
        n_resamples=200,
        **options,
    )


class Unclosed:
    """The session environment, which a harness under test must not close."""

    def __init__(self, env):
        self._env = env

    def __getattr__(self, name):
        return getattr(self._env, name)

    def close(self):
        pass
