"""A past episode as a procedure with slots: moves and doors left to the map's ways, each thing a
slot (the task's, the answer, fixed), and a lost episode's part the score confirmed."""

from worlds import GRAMMAR, found_animal, step

from rbdspy.maps.procedure import procedure_of
from rbdspy.types import Experience


def test_a_won_episode_keeps_what_it_did_with_things_and_names_each_things_slot():
    procedure = procedure_of(found_animal())
    assert [str(s.act) for s in procedure.steps] == [
        "look around",
        "focus on blue jay",
        "pick up blue jay",
        "move blue jay to red box",
    ]
    assert [s.slots for s in procedure.steps] == [(), ("answer",), ("answer",), ("answer", "task")]
    assert procedure.won and procedure.answer == "blue jay" and procedure.steps[1].answers
    assert [s.place for s in procedure.steps] == ["outside", "outside", "outside", "kitchen"]
    assert procedure.steps[3].place_named and not procedure.steps[0].place_named


def test_a_lost_episode_keeps_the_steps_the_score_rose_on_and_what_they_needed():
    lost = found_animal(won=False).model_copy(update={"won": False})
    lost = lost.model_copy(
        update={"steps": [*lost.steps[:5], step("outside", "look at tree", in_view=["tree"]), *lost.steps[5:7]]}
    )
    procedure = procedure_of(lost)
    assert [str(s.act) for s in procedure.steps] == ["focus on blue jay", "pick up blue jay"]
    assert not procedure.won


def test_refused_actions_and_an_episode_that_did_nothing_are_not_procedures():
    refused = step("hall", "dance", accepted=False)
    assert refused.act == GRAMMAR.parse("dance")
    nothing = Experience(world="house", task="t", steps=[refused], won=True)
    assert procedure_of(nothing) is None
