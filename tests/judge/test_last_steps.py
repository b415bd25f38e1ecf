"""The last steps of a trajectory, as the probability judge reads them: the last actions whole
up to a cap, numbered as the rendered trajectory numbers them."""

from rbdspy.judge.last_steps import (
    LAST_OBSERVATION_CHARS,
    LISTED_HEAD,
    MAX_LISTED_ACTIONS,
    action_list,
    last_steps,
    tail_of_text,
)
from rbdspy.types import Step, Trajectory


def test_last_steps_shows_the_last_actions_whole_up_to_a_cap_and_says_when_nothing_answered():
    steps = [Step(role="env", content="start")]
    for i in range(6):
        steps += [Step(role="agent", content=f"act {i}"), Step(role="env", content=f"seen {i}")]
    steps += [Step(role="env", content="room " * 400), Step(role="agent", content="wait")]
    text = last_steps(Trajectory(task="t", steps=steps))
    lines = text.splitlines()
    assert lines[0] == "[9] agent: act 4" and "act 3" not in text  # the last three actions only
    assert lines[4].startswith("[13] env: room room") and lines[4].endswith(" ...")
    assert len(lines[4]) < len("[13] env: ") + LAST_OBSERVATION_CHARS + 10
    assert lines[-2:] == ["[14] agent: wait", "(no observation after the last action)"]
    assert last_steps(Trajectory(task="t", steps=[Step(role="env", content="x")])) == "(the agent took no action)"


def test_the_end_of_a_rendered_trajectory_is_kept_within_the_same_size():
    assert tail_of_text("  [0] env: done ") == "[0] env: done"
    tail = tail_of_text("[0] env: " + "x" * 5000 + " the end")
    assert tail.startswith("...x") and tail.endswith(" the end") and len(tail) < 2000


def test_the_final_answer_closes_the_last_steps():
    steps = [
        Step(role="user", content="2+2?"),
        Step(role="assistant", content="thinking"),
        Step(role="env", content="ok"),
    ]
    text = last_steps(Trajectory(task="t", steps=steps, final_answer="  4 "))
    assert text.splitlines() == ["[1] assistant: thinking", "[2] env: ok", "[final answer] 4"]
    only = last_steps(Trajectory(task="t", steps=[Step(role="user", content="2+2?")], final_answer="4"))
    assert only == "[final answer] 4"


def test_the_action_list_numbers_every_action_then_the_last_answer():
    steps = [Step(role="user", content="make tea"), Step(role="env", content="A kitchen.")]
    for i in range(12):  # every action is listed, however many, whitespace collapsed
        steps += [Step(role="agent", content=f" act\n {i}"), Step(role="env", content=f"seen {i}")]
    steps.append(Step(role="env", content="tea " * 400))
    lines = action_list(Trajectory(task="make tea", steps=steps, final_answer=" done ")).splitlines()
    assert lines[:12] == [f"{i + 1}. act {i}" for i in range(12)] and "seen" not in "".join(lines)
    assert lines[12].startswith("last answer: tea tea") and lines[12].endswith(" ...")
    assert len(lines[12]) < len("last answer: ") + LAST_OBSERVATION_CHARS + 10
    assert lines[13:] == ["final answer: done"]


def test_the_action_list_says_when_nothing_acted_or_answered():
    assert action_list(Trajectory(task="t", steps=[Step(role="user", content="t")])) == "(the agent took no action)"
    waiting = Trajectory(task="t", steps=[Step(role="env", content="x"), Step(role="agent", content="wait")])
    assert action_list(waiting) == "1. wait"  # no answer after the last action: none shown


def test_a_very_long_action_list_says_how_many_actions_it_left_out_and_keeps_the_end():
    steps = [Step(role="env", content="start")]
    for i in range(MAX_LISTED_ACTIONS + 30):
        steps += [Step(role="agent", content=f"act {i}"), Step(role="env", content=f"seen {i}")]
    lines = action_list(Trajectory(task="t", steps=steps)).splitlines()
    assert lines[LISTED_HEAD - 1] == f"{LISTED_HEAD}. act {LISTED_HEAD - 1}"
    assert lines[LISTED_HEAD] == "(30 actions not shown)"
    last = MAX_LISTED_ACTIONS + 30
    assert lines[-2] == f"{last}. act {last - 1}" and lines[-1] == f"last answer: seen {last - 1}"
    assert len(lines) == MAX_LISTED_ACTIONS + 2  # the actions kept, the note, the last answer
