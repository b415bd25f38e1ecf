"""The compile metrics on hand-made cases: each part rewards what it says and can fail."""

import dspy
import pytest
from compile_testing import record

from rbdspy.lessons.caps import normalise_lessons
from rbdspy.optimizers.examples import extractor_example, judge_example
from rbdspy.optimizers.literals import action_verbs, copied_literals, literals_from_rendered, trajectory_literals
from rbdspy.optimizers.metrics import (
    actionable_part,
    combine,
    draft_problems,
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
    # "take" is a command verb (actionable) but not the cause's "open" (see the cause tests).
    "content": "Keep acting until an observation confirms the goal; take what it still needs. Do not stop early.",
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
    # ...and where, by the step number the judge was shown, so the reflection can point at it
    assert "In the trajectory shown: the trajectory ends after step [7] ('unlock chest with brass key')" in fb.feedback
    assert "[7] agent: unlock chest with brass key" in failure.trajectory
    assert "In the trajectory shown" not in ok.feedback


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
    assert set(literals_from_rendered("light the lamp", rendered)) == {"7", "lantern"}
    assert set(literals_from_rendered("light the lantern", rendered)) == {"7"}  # a task word is not a literal


def test_words_of_the_task_text_are_not_literals_but_other_action_words_are():
    lits = set(trajectory_literals("Open the chest.", ["take brass key", "unlock chest with brass key", "open chest"]))
    assert lits == {"brass", "key"}  # "chest" is the task family's word; the key is this variation's
    gold = extractor_example(record(1, "failure"))
    task_word = {
        "title": "Open the chest last",
        "description": "When the chest is locked.",
        "content": "Unlock it, then open the chest.",
    }
    specific = {
        "title": "Find the brass key",
        "description": "When a chest is locked.",
        "content": "Take the brass key first.",
    }
    assert lesson_parts(gold, lessons_pred(task_word))["general"] == (1.0, "no literal of this episode was copied")
    score, why = lesson_parts(gold, lessons_pred(specific))["general"]
    assert score == 0.0 and "brass" in why and "key" in why and "chest" not in why


def test_action_verbs_are_the_sorted_first_words_of_the_actions():
    actions = ["take brass key", "open cupboard", "Move to kitchen", "open chest", "", "take coin"]
    assert action_verbs(actions) == ["move", "open", "take"]
    assert action_verbs([]) == []


# ---- extractors ----------------------------------------------------------------------------


def test_a_general_well_formed_lesson_that_addresses_the_cause_scores_high():
    gold = extractor_example(record(1, "failure"))
    parts = lesson_parts(gold, lessons_pred(GENERAL, OPENS))
    assert parts["format"][0] == 1.0 and parts["general"][0] == 1.0 and parts["cause"][0] == 1.0
    assert parts["actionable"][0] == 1.0
    assert extractor_score(gold, lessons_pred(GENERAL, OPENS)) == pytest.approx(1.0)


def test_generality_fails_on_copied_literals_and_says_which():
    gold = extractor_example(record(3, "failure"))
    pred = lessons_pred(GENERAL, SPECIFIC)
    score, why = lesson_parts(gold, pred)["general"]
    assert score == 0.5
    assert "brass" in why and "kitchen" in why and "3" in why and "Finish" not in why
    # Both lessons are well formed and actionable ("take"); only generality tells them apart:
    # format 0.3*1 + general 0.3*0.5 + actionable 0.3*1 + cause 0.3*0.5 ("stop early", no "open").
    assert extractor_score(gold, pred) == pytest.approx((0.3 + 0.15 + 0.3 + 0.15) / 1.2)
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


def test_format_fails_on_content_over_the_word_cap():
    forty_one = dict(GENERAL, content=" ".join(["act"] * 41) + ".")  # one sentence, far below CONTENT_MAX
    assert draft_problems(forty_one) == ["content is 41 words (at most 40)"]
    assert draft_problems(dict(GENERAL, content=" ".join(["act"] * 40) + ".")) == []
    score, why = lesson_parts(extractor_example(record(0, "success")), lessons_pred(GENERAL, forty_one))["format"]
    assert score == 0.5 and "lesson 2: content is 41 words" in why


def test_actionable_part_asks_for_the_episode_command_verbs():
    verbs = ["move", "open", "take", "unlock"]
    vague = Lesson(title="Be careful", description="When acting.", content="Follow the task instructions.")
    assert actionable_part([Lesson(**OPENS), Lesson(**GENERAL)], verbs) == (
        1.0,
        "every lesson names an action of this environment",
    )
    score, why = actionable_part([vague], verbs)
    assert score == 0.0 and "'Be careful' names no action" in why and "move, open, take, unlock" in why
    assert actionable_part([Lesson(**OPENS), vague], verbs)[0] == 0.5
    assert actionable_part([vague], [])[0] == 1.0  # an episode with no actions has nothing to name
    # Through the metric: the example's "verbs", or the rendered trajectory's agent lines without them.
    gold = extractor_example(record(1, "failure"))
    pred = dspy.Prediction(lessons=[vague], drafts=[vague.model_dump()], kind="failure")
    assert lesson_parts(gold, pred)["actionable"] == (score, why)
    assert lesson_parts(gold.copy(verbs=None), pred)["actionable"] == (score, why)


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
    for part in ("format", "general", "actionable", "cause", "failure"):
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
    assert low(gold, lessons_pred(GENERAL)) == pytest.approx((0.3 + 0.3 + 0.3) / 1.2)
    assert combine({"format": (1.0, ""), "general": (1.0, ""), "rubric": (0.0, "")}) == pytest.approx(0.6 / 0.9)
    parts = {"format": (1.0, ""), "general": (0.5, ""), "actionable": (1.0, ""), "rubric": (0.0, "")}
    assert combine(parts) == pytest.approx((0.3 + 0.15 + 0.3) / 1.2)


def test_lesson_rubric_grades_with_an_lm_and_survives_garbage():
    from dspy.utils import DummyLM

    from rbdspy.optimizers.rubric import LessonRubric

    gold = extractor_example(record(1, "failure"))
    score, why = LessonRubric(DummyLM({"": {"critique": "Actionable.", "grade": 5}}))(gold, [Lesson(**GENERAL)])
    assert score == 1.0 and "5/5" in why
    score, why = LessonRubric(DummyLM({"": {"critique": "?", "grade": "lots"}}))(gold, [Lesson(**GENERAL)])
    assert score == 0.0 and "unavailable" in why
