"""The extractors' prompts: distil transferable strategy from one judged trajectory."""

import dspy

from rbdspy.types import LessonDraft


class ExtractSuccessLessons(dspy.Signature):
    """An agent succeeded at the task below. Distil at most three lessons that would help an
    agent succeed at *other variations* of this kind of task: the actions, their order and the
    checks that made this attempt work.

    Each lesson has a short title; a one-sentence description of when the lesson applies; and
    content of one or two sentences, at most 40 words, saying what to do in the environment's own
    words: its commands (open, take, go to, look around...) and the kinds of things and places
    the task names ("open a closed door before going through it", "read the cookbook before
    preparing anything"). Never copy what only this variation has: specific object names,
    colours, directions, room layouts or numbers. Prefer one sharp lesson to three vague ones;
    return an empty list if nothing transfers."""

    task: str = dspy.InputField()
    trajectory: str = dspy.InputField()
    judge_rationale: str = dspy.InputField(desc="Why the attempt was judged a success")
    lessons: list[LessonDraft] = dspy.OutputField(desc="0 to 3 lessons, each with title, description, content")


class ExtractFailureLessons(dspy.Signature):
    """An agent failed at the task below. Find the concrete cause: the action that went wrong,
    the step it skipped or did out of order, or the check it did not make. Distil at most two
    guardrails that would keep an agent from failing the same way on *other variations* of this
    kind of task.

    Each lesson has a short title; a one-sentence description of the situation where it
    applies; and content of one or two sentences, at most 40 words, naming the command to use
    or the check to make, in the environment's own words ("look around after entering a room
    before moving on"). Never copy what only this variation has: specific object names, colours,
    directions or numbers. If you cannot name a concrete cause from the trajectory, return an
    empty list: a vague warning ("follow the instructions", "be careful") misleads more than it
    helps."""

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
canteen"), which way one room lies from another ("the canteen is north of the studio"), which key
opens what. Name rooms and things exactly as the game names them; such facts are not
variation-specific here. Never state a fact the observations did not show."""
