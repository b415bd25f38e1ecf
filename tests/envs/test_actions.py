"""Typed actions: a TemplateGrammar parses what its forms write and renders it back; the adapters'
grammars type their own actions (ScienceWorld's names less where a thing is, TextWorld's doors)."""

import pytest

from rbdspy.envs.actions import Act, TemplateGrammar, find_listed, same_act, same_thing
from rbdspy.envs.scienceworld_grammar import ScienceWorldGrammar, thing_name
from rbdspy.envs.textworld_compass import textworld_grammar

GRAMMAR = TemplateGrammar(
    {"take {}": "take {}", "take {} from {}": "take {} from {}", "put {} on {}": "put {} on {}", "go north": "go north"}
)


def test_a_form_is_parsed_into_its_template_and_things_and_rendered_back():
    act = GRAMMAR.parse("put the mug  on the table")
    assert act == Act(template="put {} on {}", args=("mug", "table"))
    assert GRAMMAR.render(act) == "put mug on table" and str(act) == "put mug on table"


def test_the_form_with_more_words_wins_and_text_no_form_fits_is_none():
    assert GRAMMAR.parse("take book from armchair").template == "take {} from {}"
    assert GRAMMAR.parse("Go North") == Act(template="go north")
    assert GRAMMAR.parse("dance wildly") is None and GRAMMAR.parse("") is None


def test_a_grammar_needs_forms():
    with pytest.raises(ValueError, match="at least one form"):
        TemplateGrammar({})


def test_the_same_thing_by_its_words_and_the_same_act_by_template_and_things():
    assert same_thing("adult apple tree", "apple tree") and same_thing("Orange", "orange")
    assert same_thing("flower pot 7 containing apple tree and soil", "flower pot 7")
    assert not same_thing("apple", "apple tree") and not same_thing("blue jay", "blue jay egg")
    assert not same_thing("blue jay", "red box")
    assert same_act(
        Act(template="move {} to {}", args=("egg blue jay egg", "red box")),
        Act(template="move {} to {}", args=("blue jay egg", "red box")),
    )
    assert not same_act(Act(template="take {}", args=("mug",)), Act(template="drop {}", args=("mug",)))
    assert not same_act(None, Act(template="look"))


def test_a_listed_action_is_found_exactly_first_then_only_where_one_alone_is_alike():
    listed = [
        (Act(template="pick up {}", args=("apple",)), "pick up apple"),
        (Act(template="pick up {}", args=("apple tree",)), "pick up apple tree"),
    ]
    assert find_listed(Act(template="pick up {}", args=("apple",)), listed) == "pick up apple"
    assert find_listed(Act(template="pick up {}", args=("tree",)), listed) == "pick up apple tree"
    assert find_listed(Act(template="pick up {}", args=("apple tree",)), listed[:1]) is None  # no apple tree
    assert find_listed(Act(template="eat {}", args=("apple",)), listed) is None


def test_scienceworld_names_a_thing_without_where_it_is_or_what_it_reads():
    rooms = ("kitchen", "art studio")
    assert thing_name("orange in inventory", rooms) == "orange"
    assert thing_name("cup containing red paint in art studio", rooms) == "cup containing red paint"
    assert thing_name("thermometer, currently reading a temperature of 10 degrees celsius") == "thermometer"
    assert thing_name("seed jar (containing a apple seed, a apple seed)") == "seed jar"
    assert thing_name("substance in metal pot", rooms) == "substance in metal pot"  # what it is, not where


def test_scienceworld_parses_the_forms_its_parser_takes_as_one_action():
    grammar = ScienceWorldGrammar(rooms=("kitchen",))
    assert grammar.parse("examine substance in metal pot") == grammar.parse("look at substance in metal pot")
    assert grammar.parse("go to kitchen") == Act(template="go {}", args=("kitchen",))
    assert grammar.render(grammar.parse("go to kitchen")) == "go to kitchen"
    assert grammar.parse("open door to kitchen").on_way and not grammar.parse("open cupboard").on_way
    assert grammar.parse("0") == Act(template="0")  # the number that answers an ambiguity
    assert grammar.answer(grammar.parse("focus on blue jay")) == "blue jay"
    assert grammar.answer(grammar.parse("pick up blue jay")) is None


def test_textworld_types_its_command_templates_and_knows_its_doors():
    grammar = textworld_grammar(
        ["open {d}", "open {c}", "take {o} from {c}", "go east"], [("passageway", "d"), ("fridge", "c")]
    )
    assert grammar.parse("open passageway").on_way and not grammar.parse("open fridge").on_way
    assert grammar.parse("take book from armchair") == Act(template="take {} from {}", args=("book", "armchair"))
