import asyncio

import dspy
import pytest
from dspy.utils import DummyLM

from rbdspy.lessons.extractor import Extractor
from rbdspy.types import Verdict

TRAJ = [{"role": "user", "content": "find the key"}, {"role": "assistant", "content": "opened drawer, took key"}]


def lesson(i, **kw):
    return {"title": f"Lesson {i}", "description": f"When situation {i}.", "content": f"Do strategy {i}.", **kw}


def test_success_verdict_routes_to_the_success_signature():
    lm = DummyLM([{"lessons": [lesson(1)]}])
    dspy.configure(lm=lm)
    pred = Extractor()(task="find key", trajectory=TRAJ, verdict=Verdict(label="success", rationale="key taken"))
    assert pred.kind == "success" and [item.title for item in pred.lessons] == ["Lesson 1"]
    assert "succeeded" in lm.history[-1]["messages"][0]["content"]


def test_failure_verdict_routes_to_the_failure_signature():
    lm = DummyLM([{"lessons": [lesson(1)]}])
    dspy.configure(lm=lm)
    pred = Extractor()(task="find key", trajectory=TRAJ, verdict="failure")
    assert pred.kind == "failure" and len(pred.lessons) == 1
    assert "failed" in lm.history[-1]["messages"][0]["content"]


def test_caps_are_enforced_in_code():
    many = [lesson(i) for i in range(7)] + [lesson(99, content="c" * 5000)]
    dspy.configure(lm=DummyLM([{"lessons": many}]))
    lessons = Extractor()(task="t", trajectory=TRAJ, verdict="success").lessons
    assert len(lessons) == 3


def test_overlong_fields_are_clipped_not_dropped():
    dspy.configure(lm=DummyLM([{"lessons": [lesson(1, content="word " * 1000)]}]))
    (only,) = Extractor()(task="t", trajectory=TRAJ, verdict="success").lessons
    assert len(only.content) <= 1000 and only.content.endswith("…")


def test_drafts_missing_a_part_and_repeated_titles_are_dropped():
    drafts = [lesson(1), lesson(1), {"title": "No body", "description": "", "content": ""}, lesson(2)]
    dspy.configure(lm=DummyLM([{"lessons": drafts}]))
    lessons = Extractor()(task="t", trajectory=TRAJ, verdict="success").lessons
    assert [item.title for item in lessons] == ["Lesson 1", "Lesson 2"]


@pytest.mark.parametrize("garbage", ["not a list", '[{"title": 1}]', "{}"])
def test_malformed_output_gives_no_lessons(garbage):
    dspy.configure(lm=DummyLM([{"lessons": garbage}] * 3))
    assert Extractor()(task="t", trajectory=TRAJ, verdict="failure").lessons == []


def test_indeterminate_calls_no_lm():
    lm = DummyLM([])
    dspy.configure(lm=lm)
    pred = Extractor()(task="t", trajectory=TRAJ, verdict="indeterminate")
    assert pred.lessons == [] and pred.kind is None and lm.history == []


def test_async_path_and_bad_verdict_name():
    dspy.configure(lm=DummyLM([{"lessons": [lesson(1)]}]))
    assert len(asyncio.run(Extractor().acall(task="t", trajectory=TRAJ, verdict="success")).lessons) == 1
    with pytest.raises(ValueError, match="verdict must be"):
        Extractor()(task="t", trajectory=TRAJ, verdict="great")


def test_world_facts_tells_both_extractors_that_facts_of_a_persistent_world_may_be_stated():
    from rbdspy.signatures.extract import WORLD_FACTS_RULE

    plain, facts = Extractor(), Extractor(world_facts=True)
    for name in ("success", "failure"):
        assert WORLD_FACTS_RULE not in getattr(plain, name).signature.instructions
        instructions = getattr(facts, name).signature.instructions
        assert instructions.startswith(getattr(plain, name).signature.instructions)
        assert instructions.endswith(WORLD_FACTS_RULE)
    assert [n for n, _ in facts.named_predictors()] == [n for n, _ in plain.named_predictors()]  # same files load
