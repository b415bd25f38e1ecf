"""The compile metrics on hand-made cases: each part rewards what it says and can fail."""

import dspy
import pytest
from compile_testing import record

from rbdspy.modules.lesson_caps import normalise_lessons
from rbdspy.optimizers.examples import extractor_example, judge_example
from rbdspy.optimizers.literals import copied_literals, literals_from_rendered, trajectory_literals
from rbdspy.optimizers.metrics import (
    combine,
    extractor_feedback,
    extractor_score,
    judge_feedback,
    judge_report,
    judge_score,
    lesson_parts,
    make_extractor_metric,
)
from rbdspy.types import Lesson, Verdict


def verdict(label):
    return dspy.Prediction(verdict=Verdict(label=label, rationale="because"))


def lessons_pred(*drafts):
    lessons = normalise_lessons(list(drafts), 3)  # what the Extractor keeps
    return dspy.Prediction(lessons=lessons, drafts=list(drafts), kind="failure")


GENERAL = {
    "title": "Finish what you start",
    "description": "When a goal needs several actions.",
    "content": "Keep acting until an observation confirms the goal. Do not stop early.",
}
SPECIFIC = {
    "title": "Brass key first",
    "description": "When in room 3.",
    "content": "Take the brass key to the kitchen.",
}
OPENS = {
    "title": "Complete the final action",
    "description": "When one step remains.",
    "content": "Open what the goal names before you stop; verify it.",
}


# ---- judge ---------------------------------------------------------------------------------


def test_judge_score_is_agreement_with_the_environment_label():
    failure = judge_example(record(1, "failure"))
    assert judge_score(failure, verdict("failure")) == 1.0
    assert judge_score(failure, verdict("success")) == 0.0
    assert judge_score(failure, verdict("indeterminate")) == 0.0


def test_judge_feedback_names_the_label_the_score_and_the_broken_step():
    failure = judge_example(record(1, "failure"))
    fb = judge_feedback(failure, verdict("success"))
    assert isinstance(fb, dspy.Prediction) and fb.score == 0.0
    assert "false success" in fb.feedback and "40/100" in fb.feedback and "'open chest'" in fb.feedback
    ok = judge_feedback(judge_example(record(0, "success")), verdict("success"))
    assert ok.score == 1.0 and ok.feedback.startswith("Correct") and "100/100" in ok.feedback
    missed = judge_feedback(judge_example(record(0, "success")), verdict("failure"))
    assert "WAS accomplished" in missed.feedback
    unreadable = judge_feedback(failure, verdict("indeterminate"))
    assert "could not be read" in unreadable.feedback


def test_judge_report_rates():
    golds = ["success", "success", "failure", "failure", "failure", "failure"]
    preds = ["success", "failure", "success", "failure", "failure", "indeterminate"]
    r = judge_report(golds, preds)
    assert r["accuracy"] == pytest.approx(3 / 6)
    assert r["balanced_accuracy"] == pytest.approx((1 / 2 + 2 / 4) / 2)
    assert r["false_success_rate"] == pytest.approx(1 / 4)
    assert r["false_failure_rate"] == pytest.approx(1 / 2)
    assert r["indeterminate_rate"] == pytest.approx(1 / 6)
    assert r["confusion"]["failure"] == {"success": 1, "failure": 2, "indeterminate": 1}


def test_balanced_accuracy_does_not_reward_always_failure():
    golds = ["success"] + ["failure"] * 9
    r = judge_report(golds, ["failure"] * 10)
    assert r["accuracy"] == pytest.approx(0.9) and r["balanced_accuracy"] == pytest.approx(0.5)


# ---- literals ------------------------------------------------------------------------------


def test_literals_are_numbers_and_the_objects_and_places_actions_named():
    lits = trajectory_literals(
        "Open the chest in 3 moves.",
        ["take brass key", "move to kitchen", "open door to hallway"],
        ["You see 12 apples."],
    )
    assert {"3", "12", "brass", "key", "kitchen", "hallway"} <= set(lits)
    assert not {"take", "move", "open", "door", "the", "to"} & set(lits)  # generic action vocabulary


def test_copied_literals_match_whole_words_and_plurals():
    assert copied_literals("Pick up the keys near the kitchen.", ["key", "kitchen", "chest"]) == ["key", "kitchen"]
    assert copied_literals("Monkeys are not keys? Turn 30 degrees", ["key", "3"]) == ["key"]  # '3' is not '30'


def test_literals_from_rendered_text_fallback():
    rendered = "[0] env: You are in room 7.\n[1] agent: take lantern\n[2] env: Taken."
    assert set(literals_from_rendered("light the lantern", rendered)) == {"7", "lantern"}


# ---- extractors ----------------------------------------------------------------------------


def test_a_general_well_formed_lesson_that_addresses_the_cause_scores_high():
    gold = extractor_example(record(1, "failure"))
    parts = lesson_parts(gold, lessons_pred(GENERAL, OPENS))
    assert parts["format"][0] == 1.0 and parts["general"][0] == 1.0 and parts["cause"][0] == 1.0
    assert extractor_score(gold, lessons_pred(GENERAL, OPENS)) == pytest.approx(1.0)


def test_generality_fails_on_copied_literals_and_says_which():
    gold = extractor_example(record(3, "failure"))
    pred = lessons_pred(GENERAL, SPECIFIC)
    score, why = lesson_parts(gold, pred)["general"]
    assert score == 0.5
    assert "brass" in why and "kitchen" in why and "3" in why
    assert extractor_score(gold, pred) < extractor_score(gold, lessons_pred(GENERAL))


def test_format_fails_on_overlong_missing_and_too_many_lessons():
    gold = extractor_example(record(0, "success"))
    overlong = dict(GENERAL, content="Keep going. " * 200)
    two_sentences = dict(GENERAL, description="When a goal needs several actions. Also when tired.")
    missing = dict(GENERAL, title="")
    assert lesson_parts(gold, lessons_pred(overlong))["format"][0] == 0.0
    assert "more than three sentences" in lesson_parts(gold, lessons_pred(overlong))["format"][1]
    assert lesson_parts(gold, lessons_pred(two_sentences))["format"][0] == 0.0
    assert lesson_parts(gold, lessons_pred(GENERAL, missing))["format"][0] == 0.5
    four = [dict(GENERAL, title=f"Lesson {i}") for i in range(4)]
    assert lesson_parts(gold, lessons_pred(*four))["format"][0] == pytest.approx(0.75)


def test_cause_part_only_for_failures_with_a_recorded_cause():
    assert "cause" not in lesson_parts(extractor_example(record(0, "success")), lessons_pred(GENERAL))
    agent_failure = record(1, "failure", kind="agent")
    assert "cause" not in lesson_parts(extractor_example(agent_failure), lessons_pred(GENERAL))


def test_cause_part_fails_when_no_lesson_addresses_the_cause():
    gold = extractor_example(record(1, "failure"))  # truncated before 'open chest'
    unrelated = {"title": "Read the room", "description": "When entering a place.", "content": "Look at what is there."}
    score, why = lesson_parts(gold, lessons_pred(unrelated))["cause"]
    assert score == 0.0 and "names the mistake" in why and "verb open" in why
    assert lesson_parts(gold, lessons_pred(GENERAL))["cause"][0] == 0.5  # the mistake, not the action
    assert lesson_parts(gold, lessons_pred(OPENS))["cause"][0] == 1.0


def test_no_lessons_score_zero():
    gold = extractor_example(record(0, "success"))
    empty = dspy.Prediction(lessons=[], drafts=[], kind="success")
    assert extractor_score(gold, empty) == 0.0
    assert extractor_score(gold, dspy.Prediction(lessons=[], drafts=None, kind="success")) == 0.0
    assert "no lessons" in extractor_feedback(gold, empty).feedback


def test_extractor_feedback_lists_every_part():
    gold = extractor_example(record(3, "failure"))
    fb = extractor_feedback(gold, lessons_pred(SPECIFIC))
    assert isinstance(fb, dspy.Prediction) and fb.score == extractor_score(gold, lessons_pred(SPECIFIC))
    for part in ("format", "general", "cause", "failure"):
        assert part in fb.feedback


def test_rubric_part_is_weighted_in_when_given():
    gold = extractor_example(record(0, "success"))
    low = make_extractor_metric(rubric=lambda g, lessons: (0.0, "platitude"))
    high = make_extractor_metric(rubric=lambda g, lessons: (1.0, "sharp"))
    assert (
        low(gold, lessons_pred(GENERAL))
        < extractor_score(gold, lessons_pred(GENERAL))
        == high(gold, lessons_pred(GENERAL))
    )
    assert combine({"format": (1.0, ""), "general": (1.0, ""), "rubric": (0.0, "")}) == pytest.approx(0.7 / 1.0)


def test_lesson_rubric_grades_with_an_lm_and_survives_garbage():
    from dspy.utils import DummyLM

    from rbdspy.optimizers.rubric import LessonRubric

    gold = extractor_example(record(1, "failure"))
    score, why = LessonRubric(DummyLM({"": {"critique": "Actionable.", "grade": 5}}))(gold, [Lesson(**GENERAL)])
    assert score == 1.0 and "5/5" in why
    score, why = LessonRubric(DummyLM({"": {"critique": "?", "grade": "lots"}}))(gold, [Lesson(**GENERAL)])
    assert score == 0.0 and "unavailable" in why
