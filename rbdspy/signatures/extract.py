"""The extractors' prompts: distil transferable strategy from one judged trajectory."""

import dspy

from rbdspy.types import LessonDraft


class ExtractSuccessLessons(dspy.Signature):
    """An agent succeeded at the task below. Distil at most three lessons that would help an
    agent succeed at *other, similar* tasks: the reasoning steps, decisions and checks that
    made this attempt work.

    Each lesson has a short title; a one-sentence description of when the lesson applies;
    and content of one to three sentences stating the strategy. Write strategies, not a replay
    of this episode: no object names, numbers, locations, identifiers or other literals copied
    from this task. Prefer fewer, sharper lessons; return an empty list if nothing transfers."""

    task: str = dspy.InputField()
    trajectory: str = dspy.InputField()
    judge_rationale: str = dspy.InputField(desc="Why the attempt was judged a success")
    lessons: list[LessonDraft] = dspy.OutputField(desc="0 to 3 lessons, each with title, description, content")


class ExtractFailureLessons(dspy.Signature):
    """An agent failed at the task below. Work out why: which step went wrong, what it should
    have checked or done instead. Distil at most three guardrails that would keep an agent
    from failing the same way on *other, similar* tasks.

    Each lesson has a short title; a one-sentence description of the situation where it
    applies (when to be careful, or what not to do); and content of one to three sentences:
    the mistake to avoid, the check to make, or the corrective strategy. No object names,
    numbers, locations, identifiers or other literals copied from this task. Return an empty
    list if the cause of failure is unclear."""

    task: str = dspy.InputField()
    trajectory: str = dspy.InputField()
    judge_rationale: str = dspy.InputField(desc="Why the attempt was judged a failure")
    lessons: list[LessonDraft] = dspy.OutputField(
        desc="0 to 3 guardrail lessons, each with title, description, content"
    )
