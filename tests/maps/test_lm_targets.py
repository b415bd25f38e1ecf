"""The task's targets chosen by the LM (`TargetChooser`): only names the map knows are kept, a kind
of thing the data rule cannot match ("an animal", never won before) is found, and an LM that
misbehaves leaves the data rule's targets."""

import dspy
import pytest
from dspy.utils import DummyLM

from rbdspy.maps.lm_targets import TargetChooser, things_seen
from rbdspy.maps.targets import task_targets
from rbdspy.maps.world_map import WorldMap
from rbdspy.types import Experience, ExperienceStep

# A kitchen with a mug; through its door, a garden where a dove and a tree were seen. Nobody ever
# won a task about an animal here.
WALK = Experience(
    world="house",
    task="Put the mug on the table.",
    start="kitchen",
    in_view=["mug", "table"],
    steps=[
        ExperienceStep(place="kitchen", action="open door to garden", accepted=True, arrived="kitchen"),
        ExperienceStep(
            place="kitchen", action="go to garden", accepted=True, arrived="garden", in_view=["dove", "tree"]
        ),
    ],
    won=False,
)
TASK = "Your task is to find an animal. First, focus on the thing. Then, move it to the table in the kitchen."


def _chooser_answering(*answers):
    return TargetChooser(), DummyLM([{"targets": {"names": a}} for a in answers], adapter=dspy.JSONAdapter())


def test_the_things_seen_are_listed_with_where():
    lines = things_seen(WorldMap([WALK]))
    assert "dove (seen in: garden)" in lines and "mug (seen in: kitchen)" in lines


def test_a_kind_the_data_rule_cannot_match_is_chosen_by_the_lm():
    world = WorldMap([WALK])
    assert [t.name for t in task_targets(TASK, world)] == ["table", "kitchen"]  # no animal: never won
    chooser, lm = _chooser_answering(["dove", "table"])
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        pred = chooser(task=TASK, world=world)
    assert pred.chosen == ["dove", "table"]
    assert [(t.name, t.places) for t in pred.targets] == [
        ("dove", ("garden",)),
        ("table", ("kitchen",)),
        ("kitchen", ("kitchen",)),
    ]
    assert "dove (seen in: garden)" in lm.history[-1]["messages"][-1]["content"]


@pytest.mark.parametrize("answer", [["a unicorn"], [], ["DOVE "]])
def test_only_names_the_map_knows_are_kept(answer):
    world = WorldMap([WALK])
    chooser, lm = _chooser_answering(answer)
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        pred = chooser(task=TASK, world=world)
    # A name not copied from the list (which a schema-bound LM cannot write) or none at all: the
    # data rule's targets.
    assert pred.targets == task_targets(TASK, world)


def test_an_lm_that_fails_leaves_the_data_rule():
    world = WorldMap([WALK])

    class Broken(dspy.BaseLM):
        def forward(self, *args, **kwargs):
            raise RuntimeError("the server went away")

    with dspy.context(lm=Broken("broken"), adapter=dspy.JSONAdapter()):
        pred = TargetChooser()(task=TASK, world=world)
    assert pred.targets == task_targets(TASK, world) and pred.chosen == []


def test_the_answer_schema_lists_only_the_things_seen_and_at_most_three():
    from dspy.adapters.json_adapter import _get_structured_outputs_response_format

    from rbdspy.maps.lm_targets import MAX_CHOSEN, choosing_among

    world = WorldMap([WALK])
    chooser = choosing_among(TargetChooser().choose, sorted(world.things))
    schema = _get_structured_outputs_response_format(chooser.signature).model_json_schema()
    names = schema["$defs"]["ChosenNames"]["properties"]["names"]
    assert names["maxItems"] == MAX_CHOSEN and set(names["items"]["enum"]) == world.things
    chooser, lm = _chooser_answering(["dove", "mug", "table", "tree"])  # one name too many
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        assert chooser(task=TASK, world=world).targets == task_targets(TASK, world)
