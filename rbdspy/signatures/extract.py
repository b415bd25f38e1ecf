"""The extractors' prompts: distil transferable strategy from one judged trajectory."""

import dspy

from rbdspy.types import LessonDraft


class ExtractSuccessLessons(dspy.Signature):
    """A program succeeded at the task below: an agent in an environment, a tool user or a
    question answerer. Distil at most three lessons that would help succeed at *other tasks of
    this kind*: the steps, their order and the checks that made this attempt work.

    Each lesson has a short title saying what it is about; a one-sentence description of when
    the lesson applies; and content of one or two sentences, at most 40 words, stating as a
    general rule what to do, in the task's own terms: the operations, commands or checks this
    attempt used, written so that they hold for another task of this kind. Never copy what only
    this task has: its specific numbers, names, colours, directions or layout. Prefer one sharp
    lesson to three vague ones; return an empty list only if the attempt shows no step worth
    repeating."""

    task: str = dspy.InputField()
    trajectory: str = dspy.InputField()
    judge_rationale: str = dspy.InputField(desc="Why the attempt was judged a success")
    lessons: list[LessonDraft] = dspy.OutputField(desc="0 to 3 lessons, each with title, description, content")


class ExtractFailureLessons(dspy.Signature):
    """A program failed at the task below: an agent in an environment, a tool user or a question
    answerer. Find the concrete cause: the step that went wrong, the step it skipped or did out
    of order, or the check it did not make. Distil at most two guardrails that would keep a
    program from failing the same way on *other tasks of this kind*.

    Each lesson has a short title saying what it is about; a one-sentence description of the
    situation where it applies; and content of one or two sentences, at most 40 words, naming
    the step to take or the check to make, in the task's own terms, as a general rule that holds
    for another task of this kind. Never copy what only this task has: its specific numbers,
    names, colours, directions or layout. If you cannot name a concrete cause from the
    trajectory, return an empty list: a vague warning ("follow the instructions", "be careful")
    misleads more than it helps."""

    task: str = dspy.InputField()
    trajectory: str = dspy.InputField()
    judge_rationale: str = dspy.InputField(desc="Why the attempt was judged a failure")
    lessons: list[LessonDraft] = dspy.OutputField(
        desc="0 to 2 guardrail lessons, each with title, description, content; empty if the cause is unclear"
    )


# Appended to both extractors' instructions by `Extractor(world_facts=True)`: on a world that
# persists, its facts are what carries over to the next task, and a wrong one misleads every task.
WORLD_FACTS_RULE = """This task was played in a world that persists from one task to the next: the same rooms, doors,
containers and objects. There, besides strategies, a lesson may state facts about that world that
the trajectory's observations showed: where a thing is ("the berry is on the table in the
canteen"), which room a door leads to ("the door in the canteen leads to the studio"), which key
opens what. Name rooms and things exactly as the game names them; such facts are not
variation-specific here. Never state a fact the observations did not show."""
