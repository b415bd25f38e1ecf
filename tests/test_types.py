import pytest
from pydantic import ValidationError

from rbdspy.types import Lesson, MemoryItem, Provenance, Step, Trajectory, Verdict


class Msg:
    def __init__(self, role, content):
        self.role, self.content = role, content


def test_coerce_message_dicts_and_objects():
    t1 = Trajectory.coerce(
        [{"role": "user", "content": "boil water"}, {"role": "assistant", "content": "ok"}], task="boil"
    )
    t2 = Trajectory.coerce([Msg("user", "boil water"), Msg("assistant", "ok")], task="boil")
    assert [s.role for s in t1.steps] == ["user", "assistant"]
    assert t1.steps == t2.steps and t1.task == "boil"


def test_coerce_react_trajectory_dict():
    react = {
        "thought_0": "look first",
        "tool_name_0": "look",
        "tool_args_0": {},
        "observation_0": "a kitchen",
        "thought_1": "done",
        "tool_name_1": "finish",
        "tool_args_1": {},
        "observation_1": "Completed.",
    }
    t = Trajectory.coerce(react, task="explore")
    assert len(t.steps) == 4
    assert t.steps[0].role == "assistant" and "look first" in t.steps[0].content and "look" in t.steps[0].content
    assert t.steps[1] == Step(role="tool", content="a kitchen")


def test_coerce_keeps_our_type_and_serialised_form():
    t = Trajectory(task="x", steps=[Step(role="user", content="hi")], outcome=True)
    assert Trajectory.coerce(t) is t
    assert Trajectory.coerce(t.model_dump(mode="json")) == t


@pytest.mark.parametrize("bad", ["just a string", 42, {"foo": 1}, [{"role": "user"}], [object()]])
def test_coerce_rejects_other_shapes_naming_the_accepted_ones(bad):
    with pytest.raises(ValueError, match="Accepted: an rbdspy.Trajectory"):
        Trajectory.coerce(bad)


def test_render_elides_the_middle_but_keeps_both_ends():
    steps = [Step(role="env", content=f"step {i} " + "x" * 50) for i in range(200)]
    text = Trajectory(task="t", steps=steps, final_answer="DONE").render(max_chars=2000)
    assert len(text) < 2100
    assert text.startswith("[0] env: step 0")
    assert text.endswith("[final answer] DONE")
    assert "omitted" in text


def test_verdict_from_outcome():
    assert Verdict.from_outcome(True).label == "success"
    v = Verdict.from_outcome(False)
    assert v.label == "failure" and v.source == "ground_truth" and v.is_determinate and not v.is_success
    assert not Verdict(label="indeterminate").is_determinate


def test_lesson_requires_every_part_and_caps_length():
    with pytest.raises(ValidationError):
        Lesson(title="  ", description="d", content="c")
    with pytest.raises(ValidationError):
        Lesson(title="t" * 500, description="d", content="c")


def test_memory_item_key_text_and_json_round_trip():
    item = MemoryItem(
        title="Check the stove",
        description="When heating.",
        content="Verify it is on.",
        source="success",
        provenance=[Provenance(task="boil water", verdict="success")],
    )
    assert item.key_text("task") == "boil water"
    assert "Check the stove" in item.key_text("item")
    manual = MemoryItem(title="T", description="D", content="C")
    assert manual.key_text("task") == manual.text()
    assert MemoryItem.model_validate_json(item.model_dump_json()) == item


def test_render_shows_a_repeated_observation_once():
    room = "You are in the kitchen. You see a stove, an oven, a fridge that is closed and a counter with a knife."
    trajectory = Trajectory(
        task="cook",
        steps=[
            Step(role="env", content=room),
            Step(role="agent", content="look around"),
            Step(role="env", content=room),
            Step(role="agent", content="open fridge"),
            Step(role="env", content="You open the fridge."),
        ],
    )
    text = trajectory.render()
    assert text.count("stove") == 1 and "[2] env: (same as [0])" in text
    assert "[3] agent: open fridge" in text and "[4] env: You open the fridge." in text


def test_an_action_is_shown_with_what_it_named_where_its_text_does_not_say():
    from rbdspy.judge.last_steps import action_list, last_steps
    from rbdspy.lessons.exemplar import render_exemplar
    from rbdspy.types import Step, Trajectory

    steps = [
        Step(role="env", content='[10] button "Submit"'),
        Step(role="agent", content="click(10)"),  # a web page's element by its number
        Step(
            role="env",
            content="The page ended the episode.",
            metadata={"act": {"template": "click {}", "args": ["Submit"]}},
        ),
        Step(role="agent", content="go to kitchen"),  # its text names what it did: shown as sent
        Step(
            role="env", content="You go to the kitchen.", metadata={"act": {"template": "go {}", "args": ["kitchen"]}}
        ),
        Step(role="agent", content="look"),  # no typed note: as sent
        Step(role="env", content="A kitchen."),
    ]
    trajectory = Trajectory(task="t", steps=steps)
    assert [trajectory.action_text(i) for i in (1, 3, 5, 0)] == [
        'click(10) (= click "Submit")',
        "go to kitchen",
        "look",
        '[10] button "Submit"',
    ]
    for shown in (trajectory.render(), last_steps(trajectory), action_list(trajectory), render_exemplar(trajectory)):
        assert 'click(10) (= click "Submit")' in shown, shown
    # An adapter's own way of naming a thing the text names (ScienceWorld's "door to bedroom" for
    # "bedroom door") is not annotated; a note written by hand that is not a typed action is ignored.
    door = {"template": "open {}", "args": ["door to bedroom"]}
    for note, shown in [
        (door, "open bedroom door"),
        ({"template": "click {} {x}", "args": ["a", "b"]}, "click(3)"),
        ({"template": "click {}}", "args": ["a"]}, "click(3)"),
        ({"template": "click {}", "args": 5}, "click(3)"),
    ]:
        text = "open bedroom door" if note is door else "click(3)"
        steps = [Step(role="agent", content=text), Step(role="env", content="ok", metadata={"act": note})]
        assert Trajectory(task="t", steps=steps).action_text(0) == shown
