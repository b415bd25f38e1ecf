"""A past task's things said for this one, by aligning the two tasks' words."""

from rbdspy.maps.slots import said_for

FIND = "Your task is to find a(n) animal. First, focus on the thing. Then, move it to the red box in the kitchen."


def test_a_name_in_the_changed_part_is_this_tasks_and_in_the_shared_part_the_same():
    now = FIND.replace("red box in the kitchen", "green box in the bedroom")
    assert said_for("red box", FIND, now) == "green box"
    assert said_for("kitchen", FIND, now) == "bedroom"
    assert said_for("animal", FIND, now) == "animal"


def test_one_word_replaced_by_several_and_a_name_the_past_task_never_said():
    assert said_for("water", "Your task is to boil water.", "Your task is to boil orange juice.") == "orange juice"
    assert said_for("stove", "Your task is to boil water.", "Your task is to boil orange juice.") is None


def test_a_name_across_a_part_only_one_task_has_cannot_be_said():
    assert said_for("red box", "move it to the red box", "move it to the box") is None
