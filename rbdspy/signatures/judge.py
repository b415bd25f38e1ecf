"""The judge's prompt: did this trajectory accomplish its task?"""

from typing import Literal

import dspy
from pydantic import BaseModel


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


# ---- opt-in judge designs (rbdspy.judge.judge_for(design)); the default above is unchanged ---------

# The docstrings below end with the words of rbdspy.render.NOT_SHOWN_RULE (a docstring cannot
# import it; tests/render/test_render.py checks that they do).


class RequirementCheck(BaseModel):
    """One success condition and what the observations say about it."""

    requirement: str = ""
    evidence: str = ""
    met: bool = False


class JudgeChecklist(dspy.Signature):
    """You check whether an AI agent accomplished its task, one requirement at a time.

    First list the requirements for success: the ones the task states, and the ones the
    trajectory revealed on the way (a recipe or instructions the agent read, a target the
    environment named). Then check each requirement against the observations, not against what
    the agent claimed or intended: cite the step whose observation shows it met, or say that
    none does. A requirement is met only when an observation you were shown confirms it, or
    when it was left out of what you were shown and nothing shown contradicts it.

    A long trajectory may be shown compressed or with parts left out; a note then says exactly
    what. Never judge a trajectory a failure because of steps you were not shown: judge the
    steps you see, above all the last ones."""

    task: str = dspy.InputField(desc="What the agent was asked to do")
    trajectory: str = dspy.InputField(desc="The agent's steps and observations, in order")
    requirements: list[RequirementCheck] = dspy.OutputField(
        desc="Every success condition (from the task and from what the trajectory revealed), each with the step "
        "that shows it met or missed, and whether it is met"
    )


class JudgeWithConfidence(dspy.Signature):
    """You are a strict evaluator of an AI agent's work. Given the task and the agent's
    trajectory (its actions and what it observed), decide whether the task was actually
    accomplished, and say how sure you are.

    Check each requirement the task states against what the trajectory shows was observed, not
    against what the agent claimed or intended. The verdict is success only if every
    requirement is met. Then give your confidence that the verdict is right: near 1.0 when an
    observation settles it, near 0.5 when you are guessing. A verdict given with low confidence
    is not used, so do not overstate it.

    A long trajectory may be shown compressed or with parts left out; a note then says exactly
    what. Never judge a trajectory a failure because of steps you were not shown: judge the
    steps you see, above all the last ones."""

    task: str = dspy.InputField(desc="What the agent was asked to do")
    trajectory: str = dspy.InputField(desc="The agent's steps and observations, in order")
    rationale: str = dspy.OutputField(
        desc="One to three sentences: each requirement and the observation that meets or misses it"
    )
    verdict: Literal["success", "failure"] = dspy.OutputField(desc="success only if every requirement is met")
    confidence: float = dspy.OutputField(desc="How likely the verdict is right, from 0.0 to 1.0")


# ---- the probability design: a verdict alone, read as the probability of its first token ---------


class JudgeVerdict(dspy.Signature):
    """You are a strict evaluator of an AI agent's work. Given the task and the agent's
    trajectory (its actions and what the environment answered), decide whether the task was
    actually accomplished: success only if the observations show every requirement met, above
    all the task's final goal reached in the last steps. An action the environment refused or
    did not understand did not happen; a trajectory that stops before the final goal is a
    failure.

    A long trajectory may be shown compressed or with parts left out; a note then says exactly
    what. Never judge a trajectory a failure because of steps you were not shown: judge the
    steps you see, above all the last ones."""

    task: str = dspy.InputField(desc="What the agent was asked to do")
    trajectory: str = dspy.InputField(desc="The agent's steps and observations, in order")
    verdict: Literal["success", "failure"] = dspy.OutputField(desc="success only if the task was accomplished")


class JudgeLastSteps(dspy.Signature):
    """You are a strict evaluator of an AI agent's work. Given the task and the last steps the
    agent took (each action with what the environment answered), decide whether these last steps
    show the task accomplished: its final goal (the last thing the task asks for) reached, as
    an observation says. An action the environment refused or did not understand did not
    happen; last steps that show the agent still on its way, looking around, or meeting an
    error are a failure."""

    task: str = dspy.InputField(desc="What the agent was asked to do")
    last_steps: str = dspy.InputField(desc="The agent's last actions, each with the observation that answered it")
    verdict: Literal["success", "failure"] = dspy.OutputField(
        desc="success only if the last steps show the task accomplished"
    )


class JudgeActions(dspy.Signature):
    """You are a strict evaluator of an AI agent's work. Given the task and every action the agent
    took, in order, with the environment's answer to its last action, decide whether this sequence
    of actions accomplishes the task: every step the task asks for done, in an order that works,
    ending with the task's final goal. A sequence that stops before the final goal, skips a
    required step, or does steps in an order that cannot work is a failure."""

    task: str = dspy.InputField(desc="What the agent was asked to do")
    actions: str = dspy.InputField(desc="The agent's actions in order, then the environment's last answer")
    verdict: Literal["success", "failure"] = dspy.OutputField(desc="success only if these actions accomplish the task")
