"""Lesson truth on a persistent world: constructed lessons whose claims about where things are,
how rooms connect and which key opens what are checked against the world's own facts."""

from __future__ import annotations

import pytest

from rbdspy.envs.textworld_facts import HouseFacts
from rbdspy.envs.textworld_truth import claims, lesson_truth

FACTS = HouseFacts(
    start="studio",
    rooms=["canteen", "studio", "vault"],
    exits={
        "studio": [("north", "canteen", ""), ("west", "vault", "hatch")],
        "canteen": [("south", "studio", "")],
        "vault": [("east", "studio", "hatch")],
    },
    place={"berry": ("floor", "canteen"), "cake scented passkey": ("in", "box"), "passkey": ("on", "table")},
    room_of={
        "berry": "canteen",
        "box": "vault",
        "table": "studio",
        "cake scented passkey": "vault",
        "passkey": "studio",
    },
    state={"hatch": "locked", "box": "closed"},
    key_for={"hatch": "passkey", "box": "cake scented passkey"},
    kind={"berry": "f", "box": "c", "table": "s", "cake scented passkey": "k", "passkey": "k", "hatch": "d"},
)


@pytest.mark.parametrize(
    "text, kind, true",
    [
        ("The berry is in the canteen.", "place", True),
        ("The berry is in the studio.", "place", False),
        ("The cake scented passkey is in the box", "place", True),
        ("The passkey is inside the box", "place", False),
        ("The canteen is north of the studio", "route", True),
        ("The studio is north of the canteen", "route", False),
        ("From the studio, go west to reach the vault", "route", True),
        ("From the studio, go east to reach the vault", "route", False),
        ("The passkey unlocks the hatch", "key", True),
        ("The cake scented passkey opens the hatch", "key", False),
        # the same relations stated in other words
        ("In the canteen there is a berry.", "place", True),
        ("The berry can be found in the vault.", "place", False),
        ("The box contains the cake scented passkey.", "place", True),
        ("Use the passkey to unlock the hatch.", "key", True),
        ("Unlock the box with the passkey.", "key", False),
        ("The agent unlocked the box using the cake_scented passkey.", "key", True),
    ],
)
def test_each_kind_of_claim_is_checked_against_the_world(text, kind, true):
    [claim] = claims(text, FACTS)
    assert (claim.kind, claim.true) == (kind, true)


def test_a_longer_name_hides_the_shorter_one_inside_it():
    # "cake scented passkey" is in the vault; the plain "passkey" is in the studio.
    [claim] = claims("The cake scented passkey is in the vault.", FACTS)
    assert claim.true is True


def test_strategies_are_not_claims_and_lessons_are_counted():
    assert claims("Always look around before acting. Open doors you find closed.", FACTS) == []
    lesson = "The berry is in the canteen; go north from the studio to the canteen. Take it, then eat it."
    assert lesson_truth(lesson, FACTS) == {"claims": 2, "true": 2}
    assert lesson_truth("The berry is in the vault. Never give up.", FACTS) == {"claims": 1, "true": 0}
    assert lesson_truth("", FACTS) == {"claims": 0, "true": 0}


def test_a_real_world_checks_its_own_oracle_facts_true(tmp_path):
    pytest.importorskip("textworld")
    from rbdspy.envs.textworld_env import TextWorldHouses
    from rbdspy.envs.textworld_house import HouseSpec

    env = TextWorldHouses(worlds=(3,), spec=HouseSpec(n_rooms=4, n_objects=8, max_walkthrough=4), cache_dir=tmp_path)
    facts = env.facts(3)
    thing = sorted(facts.place)[0]
    room = facts.room_of[thing]
    other = next(r for r in facts.rooms if r != room)
    assert lesson_truth(f"The {thing} is in the {room}.", facts) == {"claims": 1, "true": 1}
    assert lesson_truth(f"The {thing} is in the {other}.", facts) == {"claims": 1, "true": 0}


@pytest.mark.parametrize(
    "text",
    [
        "Put the berry in the canteen.",  # a task quoted: asked for, not stated
        "The agent took the berry from the table and put it in the box.",  # what was done
        "The task was to put the berry in the canteen.",
        "Make sure the box is not empty before you put the berry in it.",
        "The berry is not in the canteen.",  # a negation is not read as a claim
        "Try to identify the type of box and the passkey you need to unlock it.",
    ],
)
def test_tasks_actions_and_vague_sentences_are_not_claims(text):
    assert claims(text, FACTS) == []


def test_an_action_record_is_checked_by_its_places_not_its_actions():
    record = (
        "Actions taken, not won: Put the berry in the box. [in textworld/1] > go north | > take berry | "
        "> go south | > unlock hatch with passkey || Seen: start = table ; go north = berry ; "
        "go west = box, cake scented passkey, hatch door"
    )
    found = claims(record, FACTS)
    assert [(c.text, c.true) for c in found] == [
        ("start = table", True),
        ("go north = berry", True),
        ("go west = box", True),
        ("go west = cake scented passkey", True),
    ]  # "hatch door" is no thing of this world; the actions and the quoted task claim nothing
    wrong = claims("[in textworld/1] > go east || Seen: go north = box ; go east = berry", FACTS)
    assert [(c.text, c.true) for c in wrong] == [("go north = box", False), ("go east = berry", False)]
