"""The environment agent's check before an action that commits the task's answer
(`Environment.answer_in`: ScienceWorld's "focus on X"), which cannot be taken back: a wrong answer
ends the episode as a failure. Two short questions: what the task asks for (once per episode),
then whether the thing the action names is that ("Is butterfly an animal?"). Asked whether an
action fits a task directly, the embedded 1.5B model said no to every answer, right or wrong; the
plain yes/no question, read by its probability, tells them apart (`rbdspy.agent.answer_check`)."""

from typing import Literal

import dspy

# The question the check asks of each answer; `asked_for` is `AskedFor`'s answer.
ANSWER_QUESTION = "Is {thing} {asked_for}?"


class AskedFor(dspy.Signature):
    """What does the task ask the agent to find: a particular thing, or any thing of a kind?
    Answer in a few words, e.g. "a living thing", "the red apple"."""

    task: str = dspy.InputField()
    asked_for: str = dspy.OutputField()


class YesOrNo(dspy.Signature):
    """Answer the question with yes or no."""

    question: str = dspy.InputField()
    answer: Literal["yes", "no"] = dspy.OutputField()
