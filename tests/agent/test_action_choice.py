"""choose_admissible: the listed action an LM's answer means, and the answer itself when it means none."""

import time

import pytest

from rbdspy.agent.action_choice import choose_admissible, fits_template, is_template
from rbdspy.agent.episode import clean_action

# A TextWorld room: every action the world understands is listed.
ROOM = [
    "close toolbox",
    "go north",
    "go south",
    "take Cat Calendar",
    "take fly larva from formless safe",
    "take cuboid passkey from bookshelf",
    "put cuboid passkey on workbench",
    "unlock cuboid box with cuboid passkey",
    "look",
    "examine bookshelf",
    "examine cuboid passkey",
]
# A ScienceWorld-like list: some concrete actions, then templates for what the list left out.
SCIENCE = [
    "look around",
    "inventory",
    "open door to kitchen",
    "pick up metal pot",
    "focus on metal pot",
    "move metal pot to stove",
    "focus on OBJ",
    "move OBJ to OBJ",
    "pour OBJ into OBJ",
    "look at OBJ",
]


@pytest.mark.parametrize(
    "said",
    [
        "take fly larva from formless_safe",
        "take fly larva from formless-safe",
        "Take the Fly Larva from the Formless Safe",
        "take fly larva from formless  safe!",
        "take fly larva from formlesssafe",
    ],
)
def test_a_respelled_action_is_sent_as_listed(said):
    assert choose_admissible(said, ROOM) == "take fly larva from formless safe"


@pytest.mark.parametrize(
    ("said", "meant"),
    [
        ("take cuboid passkey from book shelf", "take cuboid passkey from bookshelf"),
        ("take cuboid passkey from bookshell", "take cuboid passkey from bookshelf"),  # a typo
        ("put cuboid passkey on work benches", "put cuboid passkey on workbench"),  # a plural, split
        ("put cuboid passkey on workben", "put cuboid passkey on workbench"),  # a cut word
        ("unlock cuboid box with cuboid_passkey", "unlock cuboid box with cuboid passkey"),
        ("take cuboid passkey", "take cuboid passkey from bookshelf"),  # the list adds where it lies
        ("examine the cuboid bookshelf", "examine bookshelf"),  # the answer adds a word
    ],
)
def test_the_same_action_named_a_little_differently_is_the_listed_one(said, meant):
    assert choose_admissible(said, ROOM) == meant


@pytest.mark.parametrize(
    "said",
    [
        "dance wildly",  # no listed action has that verb
        "open toolbox",  # another verb is another action
        "examine Cat Calendar",  # "examine" is listed, but not for the calendar
        "go east",  # another name: one letter from "go west" would still be another way
        "take fly larva from formless latchkey",  # a latchkey is not a safe
        "take cuboid passkey from cuboid box",  # another place, not another spelling
        "go",  # the verb alone names nothing to add a detail to
    ],
)
def test_an_answer_no_listed_action_is_a_respelling_of_is_sent_as_written(said):
    assert choose_admissible(said, ROOM) == said


def test_an_exact_match_wins_over_a_nearer_looking_one():
    listed = ["take apples", "take apple"]
    assert choose_admissible("take apple", listed) == "take apple"
    assert choose_admissible("TAKE APPLE", listed) == "take apple"  # written as listed


def test_ties_go_to_the_action_listed_first():
    assert choose_admissible("take bug", ["take bug from case", "take bug from desk"]) == "take bug from case"
    assert choose_admissible("take bug", ["take bug from desk", "take bug from case"]) == "take bug from desk"


def test_the_nearest_of_several_respellings_is_chosen():
    listed = ["take cuboid passkey from bookshelf", "take cuboid passkeys"]
    assert choose_admissible("take cuboid passkey", listed) == "take cuboid passkeys"


def test_templates_are_never_sent():
    assert choose_admissible("focus on OBJ", SCIENCE) == "focus on OBJ"  # the answer as written, not a pick
    assert choose_admissible("move OBJ to", SCIENCE) == "move OBJ to"
    for said in ("focus on", "move", "pour", "look at"):
        assert not is_template(choose_admissible(said, SCIENCE)), said
    assert choose_admissible("focus on red wire", ["focus on OBJ", "connect OBJ to OBJ"]) == "focus on red wire"
    assert choose_admissible("jump", ["focus on OBJ"]) == "jump"  # a list of templates alone: as written


def test_an_answer_that_fills_a_template_is_kept_as_written():
    assert choose_admissible("move the thermometer to the stove", SCIENCE) == "move the thermometer to the stove"
    assert choose_admissible("focus on red wire", SCIENCE) == "focus on red wire"  # not "focus on metal pot"
    assert fits_template("pour water into pot", "pour OBJ into OBJ")
    assert not fits_template("pour water", "pour OBJ into OBJ")  # every slot needs an object
    assert fits_template("take fly larva", "take {o}") and is_template("take {o} from {c}")


def test_a_list_with_templates_only_replaces_respellings():
    """ScienceWorld's list is a sample of what the world understands: an answer that names
    another object, or more or less than a listed action, may be valid as written."""
    assert choose_admissible("Open the door to kitchen", SCIENCE) == "open door to kitchen"
    assert choose_admissible("pick up metal pots", SCIENCE) == "pick up metal pot"
    assert choose_admissible("pick up thermometer", SCIENCE) == "pick up thermometer"
    assert choose_admissible("pick up metal", SCIENCE) == "pick up metal"  # names less: maybe another thing
    assert choose_admissible("look", SCIENCE) == "look"


def test_numbers_answer_the_which_did_you_mean_question_exactly():
    options = ["0", "1", "2"]
    assert choose_admissible("1", options) == "1"
    assert choose_admissible("1: the orange in the kitchen", options) == "1"
    assert choose_admissible("12", options) == "12"  # not "1" or "2": a number is exact or nothing
    assert choose_admissible("the orange", options) == "the orange"


def test_an_empty_answer_or_list_sends_the_text():
    assert choose_admissible("", ROOM) == ""
    assert choose_admissible("   ", ROOM) == ""
    assert choose_admissible("take fly larva from formless_safe", []) == "take fly larva from formless_safe"
    assert choose_admissible("look", ["", "look"]) == "look"


def test_the_cleaned_answer_is_what_is_matched():
    assert clean_action("Action: Take fly larva from formless_safe.", ROOM) == "take fly larva from formless safe"
    assert clean_action("`take cuboid passkey from book shelf`\nbecause it is there", ROOM) == (
        "take cuboid passkey from bookshelf"
    )
    assert clean_action('> "put cuboid passkey on work bench"', ROOM) == "put cuboid passkey on workbench"
    assert clean_action("Next action: dance wildly", ROOM) == "dance wildly"
    assert clean_action(None, ROOM) == ""


def test_a_long_list_is_fast():
    verbs, things = ("take", "open", "examine"), ("box", "key")
    listed = [f"{verb} {thing} {n}" for verb in verbs for thing in things for n in range(500)]
    start = time.process_time()  # this process's CPU time: what the choice costs, not how busy the machine is
    for n in range(50):
        choose_admissible(f"take boxx {n}", listed)
    assert (time.process_time() - start) / 50 < 0.05  # a step's choice out of 3,000 actions: well under a step
    assert choose_admissible("take boxx 7", listed) == "take box 7"
