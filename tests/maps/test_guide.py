"""The guide: a past episode of the kind followed from wherever this one is, its things said for
this task; ways composed across episodes; nothing where procedures disagree or a slot cannot be
filled; the named fallback for an imperative task."""

from worlds import GRAMMAR, KIND, find_task, found_animal, step

from rbdspy.maps.guide import Guide
from rbdspy.maps.world_map import WorldMap


def listed(*actions):
    return [(GRAMMAR.parse(a), a) for a in actions]


def answer_of(act):
    return GRAMMAR.answer(act)


def guide(world, task, place="hall", in_view=("picture",), carrying=("orange",)):
    return Guide(world, task, KIND, place, in_view, carrying, answer_of=answer_of)


def play(g, action, place, in_view=(), carrying=("orange",)):
    g.played(GRAMMAR.parse(action), True, place, in_view, carrying)


def test_the_way_to_where_the_kind_was_answered_then_its_steps_with_this_tasks_things():
    world = WorldMap("house", [found_animal()])
    g = guide(world, find_task("green box"))
    assert g.offer(listed("open door to kitchen", "look around")).text == "open door to kitchen"
    play(g, "open door to kitchen", "hall", ["picture"])
    offer = g.offer(listed("go to kitchen", "close door to kitchen"))
    assert offer.text == "go to kitchen" and offer.on_the_way and offer.why.step == "way"
    play(g, "go to kitchen", "kitchen", ["green box", "stove"])
    assert g.offer(listed("open door to outside", "go to hall")).text == "open door to outside"
    play(g, "open door to outside", "kitchen", ["green box", "stove"])
    play(g, "go to outside", "outside", ["blue jay", "tree"])
    assert g.offer(listed("look around", "focus on tree", "focus on blue jay")).text == "look around"
    play(g, "look around", "outside", ["blue jay", "tree"])
    offer = g.offer(listed("focus on tree", "focus on blue jay"))
    assert offer.text == "focus on blue jay" and offer.answers and offer.why.step == "procedure"
    play(g, "focus on blue jay", "outside", ["blue jay", "tree"])
    play(g, "pick up blue jay", "outside", ["tree"], ("orange", "blue jay egg"))
    assert g.offer(listed("go to kitchen", "put down orange")).text == "go to kitchen"
    play(g, "go to kitchen", "kitchen", ["green box", "stove"], ("orange", "blue jay egg"))
    moves = listed("move orange in inventory to green box", "move blue jay egg in inventory to green box")
    assert g.offer(moves).text == "move blue jay egg in inventory to green box"


def test_an_answer_not_confirmed_here_is_not_guessed_but_the_agents_own_is_carried_on():
    world = WorldMap("house", [found_animal()])
    g = guide(world, find_task(), place="outside", in_view=["butterfly", "tree"])
    play(g, "look around", "outside", ["butterfly", "tree"])
    assert g.offer(listed("focus on butterfly", "focus on tree")) is None  # which animal: cannot tell
    play(g, "focus on butterfly", "outside", ["butterfly", "tree"])
    assert g.offer(listed("pick up butterfly", "pick up tree")).text == "pick up butterfly"


def test_a_declined_answer_is_never_offered():
    world = WorldMap("house", [found_animal()])
    g = guide(world, find_task(), place="outside", in_view=["blue jay", "tree"])
    play(g, "look around", "outside", ["blue jay", "tree"])
    g.decline("blue jay")
    assert g.offer(listed("focus on blue jay", "focus on tree")) is None


def test_procedures_that_disagree_offer_nothing_and_agreeing_ones_say_how_many_agreed():
    two = WorldMap("house", [found_animal("blue jay"), found_animal("butterfly", box="green box")])
    g = guide(two, find_task("yellow box"), place="outside", in_view=["blue jay"])
    play(g, "look around", "outside", ["blue jay"])
    play(g, "focus on blue jay", "outside", ["blue jay"])
    play(g, "pick up blue jay", "outside", [], ("orange", "blue jay"))
    play(g, "go to kitchen", "kitchen", ["yellow box", "red box"], ("orange", "blue jay"))
    # One past task's box was red, the other's green: said for this task, both are the yellow one.
    assert (
        g.offer(listed("move blue jay to yellow box", "move blue jay to red box")).text == "move blue jay to yellow box"
    )
    # Past tasks that did other things next: the map cannot tell which, and offers nothing.
    pots = [found_animal("blue jay"), found_animal("blue jay")]
    pots[1] = pots[1].model_copy(
        update={
            "steps": [
                *pots[1].steps[:6],
                step("outside", "pick up nest", in_view=["tree"], carrying=("orange", "nest")),
            ]
        }
    )
    g = guide(WorldMap("house", pots), find_task(), place="outside", in_view=["blue jay", "nest", "tree"])
    play(g, "look around", "outside", ["blue jay", "nest", "tree"])
    play(g, "focus on blue jay", "outside", ["blue jay", "nest", "tree"])
    assert g.offer(listed("pick up blue jay", "pick up nest")) is None
    g = guide(two, find_task())
    offer = g.offer(listed("open door to kitchen"))
    assert offer.text == "open door to kitchen" and offer.why.agreed == 2


def test_another_kind_of_task_gets_no_procedure_and_another_world_no_episode():
    world = WorldMap("house", [found_animal()])
    assert Guide(world, "Boil water.", "boil", "hall").offer(listed("open door to kitchen")) is None
    other = WorldMap("elsewhere", [found_animal()])
    assert other.episodes == 0


def test_an_imperative_task_with_no_procedure_is_led_to_the_things_it_names():
    world = WorldMap("house", [found_animal()])
    g = Guide(world, "Put the stove in the red box.", "put", "hall", ["picture"], (), imperative=True)
    assert g.offer(listed("open door to kitchen")).text == "open door to kitchen"
    play(g, "open door to kitchen", "hall", ["picture"], ())
    offer = g.offer(listed("go to kitchen"))
    assert offer.text == "go to kitchen" and offer.why.target == "stove"


def test_the_map_knows_where_things_were_seen_and_what_was_confirmed():
    world = WorldMap("house", [found_animal(), found_animal("butterfly", won=False)])
    assert world.where("blue jay") == ["outside"] and world.where("green box") == []
    assert world.confirmed(KIND, "blue jay") and world.confirmed(KIND, "butterfly")  # the score rose on it
    assert not world.refuted(KIND, "blue jay")
    assert [w.target for w in world.route("hall", "outside")] == ["kitchen", "outside"]
    assert world.route("hall", "hall") == [] and world.route("outside", "garden") is None


def test_the_way_back_the_environment_names_is_a_way_until_an_episode_takes_another():
    from worlds import GRAMMAR, step

    from rbdspy.types import Experience

    there = step("hall", "go to kitchen", "kitchen").model_copy(update={"way_back_act": GRAMMAR.parse("go to hall")})
    world = WorldMap("house", [Experience(world="house", task="t", start="hall", steps=[there], won=False)])
    back = world.route("kitchen", "hall")
    assert [str(w.move) for w in back] == ["go hall"] and back[0].assumed
    taken = step("kitchen", "open door to hall").model_copy(), step("kitchen", "go to hall", "hall")
    world.add(Experience(world="house", task="t", start="kitchen", steps=list(taken), won=False))
    way = world.route("kitchen", "hall")[0]
    assert not way.assumed and [str(b) for b in way.before] == ["open door to hall"]


def _plant(pot: str, plant: str = "apple tree", box: str = "red box"):
    """Found a plant in the greenhouse: focused on it, picked up the pot it grows in, brought that."""
    from worlds import step

    from rbdspy.types import Experience

    held = {f"adult {plant}": pot}
    steps = [
        step(
            "greenhouse",
            f"focus on adult {plant}",
            in_view=[f"adult {plant}", pot],
            answered=f"adult {plant}",
            score=50,
        ),
        step("greenhouse", f"pick up {pot}", in_view=[], carrying=("orange", pot), score=60),
        step("greenhouse", "go to kitchen", "kitchen", in_view=[box], carrying=("orange", pot)),
        step("kitchen", f"move {pot} in inventory to {box}", in_view=[box], score=100),
    ]
    steps[0] = steps[0].model_copy(update={"inside": held})
    task = f"Your task is to find a(n) plant. First, focus on the thing. Then, move it to the {box} in the kitchen."
    return Experience(
        world="house", task=task, kind="find-plant", start="greenhouse", inside=held, steps=steps, won=True
    )


def test_what_held_the_answer_is_a_slot_filled_with_what_holds_this_episodes_answer():
    from rbdspy.maps.procedure import procedure_of

    procedure = procedure_of(_plant("flower pot 7"))
    assert [s.slots for s in procedure.steps] == [("answer",), ("holder",), ("holder", "task")]
    world = WorldMap("house", [_plant("flower pot 7"), _plant("flower pot 3", "pea plant")])
    task = "Your task is to find a(n) plant. First, focus on the thing. Then, move it to the blue box in the kitchen."
    view = ["adult banana tree", "flower pot 2", "flower pot 7"]
    g = Guide(world, task, "find-plant", "greenhouse", view, ["orange"], answer_of=answer_of)
    g.played(
        GRAMMAR.parse("focus on adult banana tree"),
        True,
        "greenhouse",
        view,
        ["orange"],
        {"adult banana tree": "flower pot 2"},
    )
    offer = g.offer(listed("pick up flower pot 2", "pick up flower pot 7"))
    assert offer.text == "pick up flower pot 2" and offer.why.agreed == 2  # the pot this plant grows in


def test_a_thing_renamed_when_taken_is_offered_under_its_new_name():
    world = WorldMap("house", [found_animal()])
    g = guide(world, find_task("green box"), place="outside", in_view=["blue jay", "tree"])
    play(g, "look around", "outside", ["blue jay", "tree"])
    play(g, "focus on blue jay", "outside", ["blue jay", "tree"])
    play(g, "pick up blue jay", "outside", ["tree"], ("orange", "blue jay egg"))
    play(g, "go to kitchen", "kitchen", ["green box"], ("orange", "blue jay egg"))
    moves = listed("move orange in inventory to green box", "move blue jay egg in inventory to green box")
    assert g.offer(moves).text == "move blue jay egg in inventory to green box"
    assert g.same(GRAMMAR.parse("move blue jay to green box"), GRAMMAR.parse("move blue jay egg to green box"))
