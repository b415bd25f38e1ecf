"""The extractor metric on a world that persists: a lesson may name the world's rooms, objects and
keys (they carry over to the next quest), and is scored on whether what it says is true."""

from __future__ import annotations

from pathlib import Path

import dspy
import pytest
from compile_testing import record

from rbdspy.datasets.dataset import load_records
from rbdspy.envs.textworld_facts import HouseFacts
from rbdspy.optimizers.examples import extractor_example
from rbdspy.optimizers.metrics import combine, lesson_parts, make_extractor_metric
from rbdspy.types import Lesson

FACTS = HouseFacts(
    start="studio",
    rooms=["canteen", "studio"],
    exits={"studio": [("north", "canteen", "")], "canteen": [("south", "studio", "")]},
    place={"berry": ("floor", "canteen")},
    room_of={"berry": "canteen"},
    kind={"berry": "f"},
)


def lesson(content: str) -> Lesson:
    return Lesson(title="Where the berry is", description="When a task names the berry.", content=content)


def house_example(facts=FACTS) -> dspy.Example:
    return extractor_example(record(1)).copy(facts=facts)


@pytest.mark.parametrize(
    "content, truth",
    [
        ("The berry is in the canteen. From the studio go north to the canteen and take it.", 1.0),
        ("The berry is in the studio. Take it there.", 0.0),
        ("The berry is in the canteen; the canteen is south of the studio. Go there and take it.", 0.5),
    ],
)
def test_claims_about_the_world_are_scored_by_whether_they_are_true(content, truth):
    parts = lesson_parts(house_example(), dspy.Prediction(lessons=[lesson(content)]))
    assert parts["truth"][0] == truth and "general" not in parts  # specifics are allowed, if true
    if truth < 1:
        assert "false" in parts["truth"][1] and "state only what you saw" in parts["truth"][1]


def test_a_false_fact_costs_more_than_a_missing_one():
    true, false = (
        combine(lesson_parts(house_example(), dspy.Prediction(lessons=[lesson(text)])))
        for text in ("The berry is in the canteen. Take the berry.", "The berry is in the studio. Take the berry.")
    )
    none = combine(lesson_parts(house_example(), dspy.Prediction(lessons=[lesson("Look around, then take it.")])))
    assert true == none > false


def test_without_a_world_literals_are_still_penalised_and_no_truth_is_asked():
    parts = lesson_parts(extractor_example(record(1)), dspy.Prediction(lessons=[lesson("Open the chest.")]))
    assert "general" in parts and "truth" not in parts


def test_the_metric_feedback_names_the_false_fact():
    metric = make_extractor_metric(feedback=True)
    result = metric(house_example(), dspy.Prediction(lessons=[lesson("The berry is in the studio. Take it.")]))
    assert "the berry is in the studio" in result.feedback and result.score < 1


def test_a_house_record_carries_its_worlds_facts():
    pytest.importorskip("textworld")
    house = load_records(Path(__file__).resolve().parents[2] / "datasets" / "textworld-house-train.jsonl")[0]
    example = extractor_example(house)
    assert isinstance(example.facts, HouseFacts) and example.facts.rooms
    room = example.facts.room_of["mug"]
    parts = lesson_parts(example, dspy.Prediction(lessons=[lesson(f"The mug is in the {room}. Take the mug.")]))
    assert parts["truth"][0] == 1.0
