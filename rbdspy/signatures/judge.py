"""The judge's prompt: did this trajectory accomplish its task?"""

from typing import Literal

import dspy


class JudgeTrajectory(dspy.Signature):
    """You are a strict evaluator of an AI agent's work. Given the task and the agent's full
    trajectory (its actions and what it observed), decide whether the task was actually
    accomplished.

    List every requirement the task states, then check each one against what the trajectory
    shows was observed, not against what the agent claimed or intended. A task counts as a
    success only if every requirement is met and the evidence for it appears in the
    trajectory. If a requirement is unmet, contradicted, or unverifiable from the trajectory,
    or if you are unsure, the verdict is failure: a wrong success teaches future agents a
    wrong lesson, while a wrong failure only costs one lesson."""

    task: str = dspy.InputField(desc="What the agent was asked to do")
    trajectory: str = dspy.InputField(desc="The agent's steps and observations, in order")
    # The rationale comes first, so the verdict is decoded after the evidence is written down
    # (the paper's judge answers "Thoughts: ... Status: ..."); one field instead of a separate
    # chain-of-thought keeps a small local model's call short.
    rationale: str = dspy.OutputField(
        desc="One to three sentences: each requirement and the observation that meets or misses it"
    )
    verdict: Literal["success", "failure"] = dspy.OutputField(
        desc="success only if every requirement is verifiably met"
    )
