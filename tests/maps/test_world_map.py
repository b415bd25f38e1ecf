"""The map learned from typed experiences: ways between places (with what must be done first),
where things were seen, ways that compose across episodes, from any start, and targets read from
the task (named, or by what satisfied a task like it)."""

import pytest

from rbdspy.maps.suggester import MapSuggester
from rbdspy.maps.targets import task_targets
from rbdspy.maps.words import admissible_form, grown, located_form, same_action
from rbdspy.maps.world_map import WorldMap
from rbdspy.types import Experience, ExperienceStep, MemoryItem


def _step(place, action, arrived=None, in_view=(), carrying=(), accepted=True):
    return ExperienceStep(
        place=place,
        action=action,
        accepted=accepted,
        arrived=arrived or place,
        in_view=list(in_view),
        carrying=list(carrying),
    )


def _answer(place, action, answered, in_view, carrying):
    """A step that gave the task's answer, on which the environment's score rose."""
    return ExperienceStep(
        place=place,
        action=action,
        arrived=place,
        in_view=list(in_view),
        carrying=list(carrying),
        answered=answered,
        score=50,
    )


# A hall with a closed door to a kitchen (a mug there); the kitchen opens onto a garden (a bird).
TO_KITCHEN = Experience(
    world="house",
    task="Put the mug on the table.",
    start="hall",
    in_view=["table"],
    steps=[
        _step("hall", "look around", in_view=["table"]),
        _step("hall", "open door to kitchen", in_view=["table"]),
        _step("hall", "go to kitchen", "kitchen", ["mug", "stove"]),
        _step("kitchen", "pick up mug", in_view=["stove"], carrying=["mug"]),
        _step("kitchen", "go to hall", "hall", ["table"], ["mug"]),
        _step("hall", "put mug on table", in_view=["table", "mug"]),
    ],
    won=True,
)
TO_GARDEN = Experience(
    world="house",
    task="Your task is to find an animal. Then move it to the table.",
    start="kitchen",
    steps=[
        _step("kitchen", "open door to garden"),
        _step("kitchen", "go to garden", "garden", ["bird", "tree"]),
        _step("garden", "pick up bird", in_view=["tree"], carrying=["bird egg"]),
    ],
    won=True,
)


def test_ways_and_what_must_be_done_first_are_learned_from_typed_steps():
    world = WorldMap([TO_KITCHEN])
    door = world.edges["hall"]["kitchen"]
    assert (door.action, door.before) == ("go to kitchen", ("open door to kitchen",))
    assert world.edges["kitchen"]["hall"].before == ()  # picking the mug up opened nothing
    assert world.where("mug") == ["kitchen"] and world.taking("mug") == "pick up mug"
    assert world.where("table") == ["hall"]  # where the episode put the mug is not where the world keeps it
    assert world.where("mug") == ["kitchen"]


def test_ways_compose_across_episodes_and_another_worlds_are_left_out():
    other = TO_GARDEN.model_copy(update={"world": "elsewhere"})
    world = WorldMap([TO_KITCHEN, TO_GARDEN, other], world="house")
    assert world.episodes == 2
    assert [e.action for e in world.way("hall", ["garden"])] == ["go to kitchen", "go to garden"]
    assert world.way("garden", ["hall"]) is None  # no episode went that way
    assert world.way("hall", ["hall"]) == []


def test_the_suggester_leads_from_any_start_and_opens_the_door_first():
    world = WorldMap([TO_KITCHEN])
    suggester = MapSuggester(world, "Put the mug on the table.", "hall", ["table"])
    assert suggester.suggest(["look around", "open kitchen door"]) == "open kitchen door"  # as the list writes it
    suggester.played("open kitchen door", True, "hall", ["table"])
    assert suggester.suggest(["go to kitchen", "close door to kitchen"]) == "go to kitchen"
    suggester.played("go to kitchen", True, "kitchen", ["mug", "stove"])
    assert suggester.suggest(["pick up mug", "go to hall"]) == "pick up mug"
    suggester.played("pick up mug", True, "kitchen", ["stove"], ["mug"])
    assert suggester.suggest(["go to hall", "pick up stove"]) == "go to hall"
    suggester.played("go to hall", True, "hall", ["table"], ["mug"])
    assert suggester.suggest(["put mug on table", "look around"]) is None  # what to do with it is the agent's


def test_a_suggestion_is_only_ever_an_admissible_action():
    world = WorldMap([TO_KITCHEN])
    suggester = MapSuggester(world, "Put the mug on the table.", "hall", ["table"])
    assert suggester.suggest(["look around"]) is None
    assert MapSuggester(world, "Put the mug on the table.", "attic").suggest(["go to kitchen"]) is None  # unknown place
    assert MapSuggester(WorldMap(), "Put the mug on the table.", "hall").suggest(["go to kitchen"]) is None


def test_a_kind_of_thing_is_looked_for_where_a_task_like_it_was_won():
    world = WorldMap([TO_KITCHEN, TO_GARDEN])
    targets = task_targets("Your task is to find an animal. Then move it to the table.", world)
    assert [(t.kind, t.places) for t in targets] == [(True, ("garden",)), (False, ("hall",))]
    plant = TO_GARDEN.model_copy(
        update={
            "task": "Your task is to find a plant. Then move it to the table.",
            "steps": [_step("kitchen", "pick up fern", carrying=["fern"])],
        }
    )
    with_plant = WorldMap([TO_KITCHEN, TO_GARDEN, plant])
    # The most alike task that was won decides: a plant is looked for where a plant was found.
    assert task_targets("Your task is to find a plant. Then move it to the table.", with_plant)[0].places == (
        "kitchen",
    )
    assert task_targets("Put the mug on the table.", world)[0].kind is False  # names what it wants
    suggester = MapSuggester(world, "Your task is to find an animal. Then move it to the table.", "hall")
    assert suggester.suggest(["open door to kitchen"]) == "open door to kitchen"


def test_actions_in_other_words_are_the_same_action():
    assert same_action("open door to kitchen", "open kitchen door")
    assert not same_action("open door to kitchen", "open door to garden")
    assert admissible_form("Take Mug", ["look", "take mug"]) == "take mug"
    assert admissible_form("take cup", ["take mug"]) is None


def test_an_item_written_before_experiences_were_typed_still_loads():
    old = '{"title": "t", "description": "d", "content": "> go north | > take mug", "id": "x", "source": "success"}'
    item = MemoryItem.model_validate_json(old)
    assert item.experience is None and item.content == "> go north | > take mug"
    typed = MemoryItem(title="t", description="d", content="c", experience=TO_KITCHEN)
    assert MemoryItem.model_validate_json(typed.model_dump_json()).experience == TO_KITCHEN


def test_a_door_is_learned_when_the_episode_starts_with_something_in_hand():
    # ScienceWorld's agent starts holding an orange: holding it is not taking it.
    holding = TO_KITCHEN.model_copy(
        update={
            "carrying": ["orange"],
            "steps": [s.model_copy(update={"carrying": ["orange", *s.carrying]}) for s in TO_KITCHEN.steps],
        }
    )
    assert WorldMap([holding]).edges["hall"]["kitchen"].before == ("open door to kitchen",)


def test_a_way_back_the_environment_names_is_known_until_an_episode_takes_another():
    out = Experience(
        world="house",
        start="hall",
        steps=[ExperienceStep(place="hall", action="go north", arrived="kitchen", way_back="go south")],
    )
    world = WorldMap([out])
    assert (world.edges["kitchen"]["hall"].action, world.edges["kitchen"]["hall"].assumed) == ("go south", True)
    taken = Experience(
        world="house", start="kitchen", steps=[ExperienceStep(place="kitchen", action="climb down", arrived="hall")]
    )
    world.add(taken)
    assert (world.edges["kitchen"]["hall"].action, world.edges["kitchen"]["hall"].assumed) == ("climb down", False)


def test_the_thing_a_task_fetches_is_taken_as_this_world_takes_things():
    world = WorldMap([TO_KITCHEN])  # "pick up mug": this world picks things up
    suggester = MapSuggester(world, "Put the stove on the table.", "kitchen", ["stove"])
    assert suggester.suggest(["look around", "pick up stove", "open stove"]) == "pick up stove"
    later = MapSuggester(world, "Put the mug on the stove.", "kitchen", ["mug", "stove"], ["mug"])
    assert later.suggest(["pick up stove", "put mug on stove"]) is None  # where a thing goes is not fetched


def test_a_kind_of_thing_not_in_view_where_it_was_found_is_looked_for_in_the_next_place():
    """Movable things move between tasks: where none of those that satisfied the kind is in view,
    the map leads on to the next place one was found, and never back to a place searched."""
    animal = "Your task is to find an animal. Then move it to the table."
    in_garden = TO_GARDEN.model_copy(update={"kind": "find-animal"})
    in_kitchen = in_garden.model_copy(
        update={
            "task": "Your task is to find an animal. Then move it to the stove.",
            "steps": [_step("kitchen", "pick up cat", in_view=["stove"], carrying=["cat"])],
        }
    )
    world = WorldMap([TO_KITCHEN, in_garden, in_garden, in_kitchen])
    assert task_targets(animal, world, kind="find-animal")[0].places == ("garden", "kitchen")
    suggester = MapSuggester(world, animal, "kitchen", ["stove"], kind="find-animal")  # no cat here this time
    assert suggester.suggest(["go to garden", "go to hall"]) == "go to garden"
    suggester.played("go to garden", True, "garden", ["tree"])  # no bird either
    assert suggester.suggest(["go to kitchen", "look around"]) is None  # both searched
    found = MapSuggester(world, animal, "kitchen", ["cat", "stove"], kind="find-animal")
    assert found.suggest(["pick up cat", "go to garden"]) == "pick up cat"  # here, though seen more there


def test_a_thing_named_as_the_kind_names_itself_is_left_to_the_kind_target():
    """ScienceWorld calls what grows in a pot a "living thing": in a find-living-thing task that
    is the kind's own name, found by what satisfied the kind, not a second place to go."""
    task = "Your task is to find a(n) living thing. Then move it to the red box in the kitchen."
    past = _won_by_answer("Your task is to find a(n) living thing.", "find-living-thing", "bird", place="garden")
    pot = Experience(
        world="house",
        task="Water the plant.",
        start="hall",
        steps=[_step("hall", "look around", in_view=["living thing"])],
    )
    world = WorldMap([TO_KITCHEN, past, pot])
    assert [t.name for t in task_targets(task, world)][-2:] == ["living thing", "kitchen"]
    assert [t.name for t in task_targets(task, world, kind="find-living-thing")] == ["bird", "kitchen"]
    assert "living thing" in [t.name for t in task_targets(task, WorldMap([TO_KITCHEN, pot]), kind="find-living-thing")]


def test_a_named_thing_in_none_of_the_places_it_was_seen_is_passed_over_for_what_the_task_names_next():
    """The table was seen in the hall; this time the task puts it in the garden. Once the hall is
    searched, the map leads to the garden the task names next instead of offering nothing."""
    world = WorldMap([TO_KITCHEN, TO_GARDEN])
    task = "Put the mug on the table in the garden."
    suggester = MapSuggester(world, task, "kitchen", ["stove"], ["mug"])
    assert [t.name for t in suggester.targets] == ["mug", "table", "garden"]
    assert suggester.suggest(["go to hall", "go to garden"]) == "go to hall"  # where the table was seen
    suggester.played("go to hall", True, "hall", [])  # no table there now
    assert suggester.suggest(["go to kitchen", "look around"]) == "go to kitchen"  # on the way to the garden
    suggester.played("go to kitchen", True, "kitchen", ["stove"])
    assert suggester.suggest(["open door to garden", "look around"]) == "open door to garden"
    fetching = MapSuggester(world, task, "hall", ["table"])  # the mug to carry is not in the kitchen
    assert fetching.suggest(["open kitchen door"]) == "open kitchen door"
    fetching.played("go to kitchen", True, "kitchen", ["stove"])
    assert fetching.suggest(["go to hall", "open door to garden"]) is None  # not on without the mug


def test_a_held_thing_whose_description_changed_is_the_same_thing():
    """ScienceWorld describes a pot by what grows in it, and the plant grows as the agent walks:
    the door opened on the way is still what the way needed, and nothing was taken there."""
    from rbdspy.maps.words import gained

    young, grown = "flower pot 7 (containing a peach tree in the adult stage)", "flower pot 7 (containing a peach tree)"
    assert gained([young, "orange"], [grown, "orange"]) == []
    assert gained(["book (dracula)"], ["book (dracula)", "book (emma)"]) == ["book (emma)"]
    assert gained(["orange"], [young, "orange"]) == [young]
    assert gained(["apple"], ["apple", "apple"]) == ["apple"]  # one more of a name held
    steps = [
        _step("greenhouse", "pick up flower pot 7", carrying=[young]),
        _step("greenhouse", "go to outside", "outside", carrying=[young]),
        _step("outside", "open door to kitchen", carrying=[grown]),
        _step("outside", "go to kitchen", "kitchen", carrying=[grown]),
    ]
    world = WorldMap([Experience(world="house", task="Find a plant.", start="greenhouse", steps=steps, won=True)])
    assert world.edges["outside"]["kitchen"].before == ("open door to kitchen",)
    assert [(h.place, h.action) for h in world.handled] == [("greenhouse", "pick up flower pot 7")]


# A way out of the kitchen learned after a "look around" (the last thing done there).
LOOKED_THEN_LEFT = Experience(
    world="house",
    task="Put the mug on the table.",
    start="kitchen",
    steps=[_step("kitchen", "look around", in_view=["mug"]), _step("kitchen", "go to hall", "hall", ["table"])],
    won=False,
)


def test_what_was_done_first_is_not_offered_again_once_it_left_the_way_shut():
    """Tried once, the look around did not open the way, so it is not offered again while the
    agent stays."""
    world = WorldMap([LOOKED_THEN_LEFT, TO_KITCHEN])
    assert world.edges["kitchen"]["hall"].before == ("look around",)
    suggester = MapSuggester(world, "Look at the table.", "kitchen", ["mug"])
    assert suggester.suggest(["look around", "open door to hall"]) == "look around"
    suggester.played("look around", True, "kitchen", ["mug"])
    suggester.played("look at mug", True, "kitchen", ["mug"])
    assert suggester.suggest(["look around", "open door to hall"]) is None
    suggester.played("open door to hall", True, "kitchen", ["mug"])
    assert suggester.suggest(["look around", "go to hall"]) == "go to hall"


def test_what_another_episode_did_first_on_the_same_way_is_offered_once_the_first_is_spent():
    """The way to the hall was first learned after a "look around" (the door stood open then); a
    later episode opened the door first. Once the look around left the way shut, the door is
    offered, and the record names the episode that opened it."""
    looked = LOOKED_THEN_LEFT
    opened = looked.model_copy(
        update={
            "task": "Find the table.",
            "steps": [
                _step("kitchen", "open door to hall", in_view=["mug"]),
                _step("kitchen", "go to hall", "hall", ["table"]),
            ],
        }
    )
    world = WorldMap([looked, opened, looked])
    assert [e.before for e in world.ways_between(world.edges["kitchen"]["hall"])] == [
        ("look around",),
        ("open door to hall",),
    ]
    suggester = MapSuggester(world, "Look at the table.", "kitchen", ["mug"])
    assert suggester.suggest(["look around", "open door to hall"]) == "look around"
    suggester.played("look around", True, "kitchen", ["mug"])
    assert suggester.suggest(["look around", "open door to hall"]) == "open door to hall"
    assert (suggester.why.step, suggester.why.learned_in) == ("first", "Find the table.")
    suggester.played("open door to hall", True, "kitchen", ["mug"])
    assert suggester.suggest(["look around", "go to hall"]) == "go to hall"
    assert WorldMap([looked]).ways_between(WorldMap([looked]).edges["kitchen"]["hall"])[1:] == []


def test_a_way_no_episode_opened_from_here_is_opened_as_one_into_the_same_place_was():
    """One episode went from the greenhouse to the hall with the door already open; another
    opened the door to the hall from the kitchen. Standing in the greenhouse with that door shut
    (the move not listed), the map offers what opened a way into the hall from the kitchen, as it
    says where it leads; what was done first there that does not ("look around") is not offered."""
    through_open_door = LOOKED_THEN_LEFT.model_copy(
        update={"start": "greenhouse", "steps": [_step("greenhouse", "go to hall", "hall", ["table"])]}
    )
    from_kitchen = LOOKED_THEN_LEFT.model_copy(
        update={
            "task": "Find the table.",
            "steps": [
                _step("kitchen", "look around", in_view=["mug"]),
                _step("kitchen", "open door to hall", in_view=["mug"]),
                _step("kitchen", "go to hall", "hall", ["table"]),
            ],
        }
    )
    world = WorldMap([through_open_door, from_kitchen])
    assert world.openings_into(world.edges["greenhouse"]["hall"]) == [("open door to hall", "Find the table.")]
    suggester = MapSuggester(world, "Look at the table.", "greenhouse", ["pot"])
    assert suggester.suggest(["look around", "open door to hall"]) == "open door to hall"
    assert (suggester.why.step, suggester.why.learned_in) == ("first", "Find the table.")
    suggester.played("open door to hall", True, "greenhouse", ["pot"])
    assert suggester.suggest(["look around", "go to hall"]) == "go to hall"
    assert (
        MapSuggester(WorldMap([through_open_door]), "Look at the table.", "greenhouse").suggest(
            ["look around", "open door to hall"]
        )
        is None
    )


def test_a_thing_seen_where_no_way_is_known_is_looked_for_where_one_is():
    attic = Experience(world="house", start="attic", in_view=["mug"], steps=[])  # no way to the attic
    world = WorldMap([attic, attic, TO_KITCHEN])  # the mug: seen twice in the attic, once in the kitchen
    assert world.where("mug") == ["attic", "kitchen"]
    suggester = MapSuggester(world, "Put the mug on the table.", "hall", ["table"])
    assert suggester.suggest(["open door to kitchen"]) == "open door to kitchen"


def test_a_thing_is_looked_for_where_it_was_seen_by_its_own_name_not_where_a_plainer_one_was():
    """A plain "locker" in the hall is another thing than the "type 7 locker" seen in the kitchen:
    the task that names the type 7 locker is led to the kitchen, even from the hall, where more
    episodes saw their locker. Only a thing never seen by its own name is looked for under a name
    it names (a "butterfly" seen, a "butterfly egg" asked for)."""
    hall = Experience(world="house", start="hall", in_view=["locker", "table"], steps=[])
    world = WorldMap([hall, hall, TO_KITCHEN.model_copy(update={"in_view": ["table", "locker"]}), _to_locker()])
    assert world.where("type 7 locker") == ["kitchen"]
    assert world.where("locker") == ["hall", "kitchen"]  # seen by that name in both
    suggester = MapSuggester(world, "Open the type 7 locker.", "hall", ["locker", "table"])
    assert suggester.suggest(["open locker", "open door to kitchen"]) == "open door to kitchen"
    assert WorldMap([hall]).where("locker with a lid") == ["hall"]


def _to_locker():
    steps = [_step("hall", "open door to kitchen"), _step("hall", "go to kitchen", "kitchen", ["type 7 locker"])]
    return Experience(world="house", task="Look around.", start="hall", steps=steps)


def test_what_was_done_with_a_kind_of_thing_is_offered_again_where_one_is_in_view():
    focused = TO_GARDEN.model_copy(
        update={
            "steps": [
                _step("kitchen", "open door to garden"),
                _step("kitchen", "go to garden", "garden", ["bird", "tree"]),
                ExperienceStep(
                    place="garden", action="focus on bird", arrived="garden", in_view=["bird"], answered="bird"
                ),
                _step("garden", "pick up bird", in_view=["tree"], carrying=["bird egg"]),
            ]
        }
    )
    world = WorldMap([focused])
    assert [(h.thing, h.action) for h in world.handled] == [("bird", "focus on bird"), ("bird egg", "pick up bird")]
    task = "Your task is to find an animal. Then move it to the table."
    suggester = MapSuggester(world, task, "garden", ["bird", "tree"])
    offered = ["look at tree", "focus on bird", "pick up bird", "go to kitchen"]
    assert suggester.suggest(offered) == "focus on bird"  # the answer first, as it was given
    suggester.played("focus on bird", True, "garden", ["bird", "tree"])
    assert suggester.target.kind  # not done: the episode also took it
    assert suggester.suggest(offered) == "pick up bird"
    assert suggester.suggest(["look at tree", "go to kitchen"]) is None  # no such thing in view: the agent's choice
    suggester.played("pick up bird", True, "garden", ["tree"], ["bird egg"])
    assert suggester.done == 1  # done: on to where the task brings it
    answered_only = MapSuggester(WorldMap([focused.model_copy(update={"steps": focused.steps[:3]})]), task, "garden")
    answered_only.played("focus on bird", True, "garden", ["bird"])
    assert answered_only.done == 1  # all that was done with one is done


def test_the_map_tells_a_step_on_the_way_from_one_done_with_a_thing():
    world = WorldMap([TO_KITCHEN])
    suggester = MapSuggester(world, "Put the mug on the table.", "hall", ["table"])
    assert suggester.next_step(["open door to kitchen"]) == ("open door to kitchen", True, True)
    suggester.played("open door to kitchen", True, "hall", ["table"])
    suggester.played("go to kitchen", True, "kitchen", ["mug", "stove"])
    assert suggester.next_step(["pick up mug", "go to hall"]) == ("pick up mug", False, True)
    assert suggester.next_step(["look around"]) == (None, False, True)
    guessing = MapSuggester(world, "Put the stove in the hall.", "kitchen", ["stove"])  # nobody took a stove
    assert guessing.next_step(["pick up stove", "go to hall"]) == ("pick up stove", False, False)


def _won_by_answer(task, kind, thing, place="garden"):
    return Experience(
        world="house",
        task=task,
        kind=kind,
        start=place,
        steps=[ExperienceStep(place=place, action=f"focus on {thing}", arrived=place, in_view=[thing], answered=thing)],
        won=True,
    )


def test_where_the_environment_names_kinds_only_a_task_of_the_same_kind_says_what_satisfies_it():
    template = "Your task is to find the animal with the {} life span. The animals are in the outside location."
    longest = _won_by_answer(template.format("longest"), "lifespan-longest", "bear")
    shortest = template.format("shortest")
    world = WorldMap([longest])
    assert task_targets(shortest, world)[0].name == "bear"  # one word apart: words alone take it as alike
    assert task_targets(shortest, world, kind="lifespan-shortest") == []  # another kind: nothing to look for
    assert task_targets(shortest, world, kind="lifespan-longest")[0].name == "bear"


def test_a_right_answer_in_an_episode_lost_later_says_what_satisfies_the_kind():
    """The environment's score rising on an answer confirms it, though the episode did not win;
    an answer the score did not rise on (or a step with no score, as items stored before) does not."""
    task = "Find a non-living thing. Then move it to the blue box in the bathroom."

    def lost(score):
        answer = ExperienceStep(place="hall", action="focus on book", arrived="hall", answered="book", score=score)
        walk = ExperienceStep(place="hall", action="go to studio", arrived="studio", score=score)
        return Experience(
            world="house", task=task, kind="find-non-living", start="hall", steps=[answer, walk], won=False
        )

    assert task_targets(task, WorldMap([lost(75.0)]), kind="find-non-living")[0].places == ("hall",)
    assert task_targets(task, WorldMap([lost(0.0)]), kind="find-non-living") == []
    assert task_targets(task, WorldMap([lost(None)]), kind="find-non-living") == []


def test_an_answer_held_since_it_was_taken_elsewhere_was_found_where_it_was_taken():
    task = "Find a non-living thing. Then move it to the blue box in the bathroom."
    steps = [
        ExperienceStep(place="study", action="pick up book", arrived="study", carrying=["book"]),
        ExperienceStep(place="study", action="go to hall", arrived="hall", carrying=["book"]),
        ExperienceStep(
            place="hall", action="focus on book", arrived="hall", carrying=["book"], answered="book", score=50.0
        ),
    ]
    episode = Experience(world="house", task=task, kind="find-non-living", start="study", steps=steps, won=False)
    assert task_targets(task, WorldMap([episode]), kind="find-non-living")[0].places == ("study",)


def test_a_name_inside_a_hyphenated_word_is_not_named_by_the_task():
    from rbdspy.maps.targets import task_names

    assert not task_names("Find a non-living thing.", "living thing")
    assert task_names("Find a living thing.", "living thing")
    assert task_names("Find the non-living thing.", "non-living thing")


def test_a_name_whose_words_are_scattered_over_the_task_is_not_named_by_it():
    from rbdspy.maps.targets import task_names

    task = "Find a(n) animal. First, focus on the thing. Then, move it to the green box in the living room."
    assert not task_names(task, "living thing")  # "living" of the room, "thing" of the animal
    assert not task_names(task, "box green")
    assert task_names(task, "green box") and task_names(task, "living room")
    assert task_names("Take the box of chocolates from the shelf.", "box of chocolates")
    assert task_names("Take the box of chocolates from the shelf.", "box chocolates")


def test_no_second_answer_is_offered_once_the_episode_gave_its_own():
    past = _won_by_answer("Find a plant.", "find-plant", "cherry tree")
    suggester = MapSuggester(
        WorldMap([past]), "Find a plant.", "garden", ["cherry tree", "pea plant"], kind="find-plant"
    )
    offered = ["focus on cherry tree", "focus on pea plant", "look around"]
    assert suggester.suggest(offered) == "focus on cherry tree"
    suggester.played("focus on pea plant", True, "garden", ["cherry tree", "pea plant"])
    assert suggester.suggest(offered) is None


def test_an_answer_is_vouched_for_while_every_episode_of_the_kind_that_gave_it_was_confirmed():
    """The environment's word on an answer, for this kind of task only: confirmed (won, or the
    score rose) and never given to no avail; nothing is vouched for where no kind is named."""
    task = "Find the animal with the shortest life span."
    won = _won_by_answer(task, "lifespan-shortest", "chameleon", place="outside")
    lost = won.model_copy(update={"won": False})
    other_kind = won.model_copy(update={"kind": "lifespan-longest"})

    def vouched(experiences, kind="lifespan-shortest", action="focus on chameleon"):
        return MapSuggester(WorldMap(experiences), task, "outside", ["chameleon"], kind=kind).vouched(action)

    assert vouched([won]) and vouched([won, won])
    assert not vouched([won, lost])  # given again to no avail: what answers depends on the task
    assert not vouched([lost]) and not vouched([other_kind])
    assert not vouched([won], action="focus on axe")
    assert not vouched([won], kind=None)


def test_an_answer_is_refuted_once_every_episode_of_the_kind_that_gave_it_lost_on_it():
    """The environment's word against an answer, for this kind of task only: given, and never
    confirmed; an answer confirmed once, or given in another kind of task, is not refuted."""
    task = "Find the animal with the shortest life span."
    won = _won_by_answer(task, "lifespan-shortest", "chameleon", place="outside")
    lost = won.model_copy(update={"won": False, "steps": [s.model_copy(update={"score": None}) for s in won.steps]})

    def refuted(experiences, kind="lifespan-shortest", action="focus on chameleon"):
        return MapSuggester(WorldMap(experiences), task, "outside", ["chameleon"], kind=kind).refuted(action)

    assert refuted([lost]) and refuted([lost, lost])
    assert not refuted([won, lost]) and not refuted([won])  # confirmed once: not the world's no
    assert not refuted([lost], kind="lifespan-longest") and not refuted([lost], kind=None)
    assert not refuted([lost], action="focus on axe")


# A non-living thing answered in the bathroom, then carried on with there.
CUP_TASK = "Find a non-living thing. Then move it to the blue box."
CUP_TO_BOX = Experience(
    world="house",
    task=CUP_TASK,
    kind="find-non-living",
    start="bathroom",
    steps=[
        ExperienceStep(place="bathroom", action="focus on cup", arrived="bathroom", answered="cup"),
        ExperienceStep(place="bathroom", action="look at sink", arrived="bathroom"),
        ExperienceStep(place="bathroom", action="move cup to blue box", arrived="bathroom"),
    ],
    won=True,
)


def test_what_an_episode_went_on_to_do_there_with_its_thing_is_part_of_handling_it():
    world = WorldMap([CUP_TO_BOX])
    assert [h.action for h in world.handled] == ["focus on cup", "move cup to blue box"]
    suggester = MapSuggester(world, CUP_TASK, "bathroom", ["cup", "blue box"], kind="find-non-living")
    offered = ["move cup to blue box", "focus on cup", "look at sink"]
    assert suggester.suggest(offered) == "focus on cup"
    suggester.played("focus on cup", True, "bathroom", ["cup", "blue box"])
    assert suggester.suggest(offered) == "move cup to blue box"


def test_after_an_answer_of_its_own_the_episode_is_offered_what_followed_a_past_answer_with_its_thing():
    """The past episode answered with a cup and moved the cup to the blue box; this one answered
    with a lamp: moving the lamp there is offered, marked as not done before (`handle-like`)."""
    suggester = MapSuggester(WorldMap([CUP_TO_BOX]), CUP_TASK, "bathroom", ["lamp", "blue box"], kind="find-non-living")
    offered = ["move lamp to blue box", "focus on lamp", "look at sink", "look around"]
    suggester.played("focus on lamp", True, "bathroom", ["lamp", "blue box"])
    assert suggester.next_step(offered) == ("move lamp to blue box", False, False)
    assert suggester.why.step == "handle-like" and suggester.why.learned_in == CUP_TASK
    suggester.played("move lamp to blue box", True, "bathroom", ["blue box"])
    assert suggester.suggest(offered) is None  # done: nothing more followed the past answer
    other = MapSuggester(WorldMap([CUP_TO_BOX]), CUP_TASK, "bathroom", ["lamp"], kind="find-non-living")
    other.played("look at lamp", True, "bathroom", ["lamp"])  # not an answer: nothing follows it
    assert other.suggest(offered) != "move lamp to blue box"


def test_a_follow_up_the_list_does_not_name_is_offered_where_it_fills_a_listed_template():
    suggester = MapSuggester(WorldMap([CUP_TO_BOX]), CUP_TASK, "bathroom", ["cup", "blue box"], kind="find-non-living")
    suggester.played("focus on cup", True, "bathroom", ["cup", "blue box"])
    assert suggester.suggest(["look around", "move OBJ to OBJ"]) == "move cup to blue box"
    assert suggester.suggest(["look around"]) is None  # neither listed nor a template it fills
    suggester.played("look around", True, "bathroom", ["blue box"])  # the cup is gone from view
    assert suggester.suggest(["look around", "move OBJ to OBJ"]) is None


def test_each_suggestion_says_why_and_which_past_tasks_it_comes_from():
    # The door and the way are learned in one quest, the mug seen in another that came in another way.
    seen_mug = Experience(
        world="house",
        task="Look at the stove.",
        start="kitchen",
        in_view=["mug", "stove"],
        steps=[_step("kitchen", "look at stove", in_view=["mug", "stove"])],
        won=True,
    )
    world = WorldMap([TO_GARDEN, seen_mug, TO_KITCHEN.model_copy(update={"task": "Bring the table a mug."})])
    suggester = MapSuggester(world, "Put the mug on the table.", "hall", ["table"])
    assert suggester.why is None
    assert suggester.suggest(["open kitchen door"]) == "open kitchen door"
    first = suggester.why
    assert (first.target, first.kind, first.toward, first.step) == ("mug", False, "kitchen", "first")
    assert first.learned_in == "Bring the table a mug."
    assert first.known_from == ("Look at the stove.", "Bring the table a mug.")
    assert first.text() == "done first where the way to the kitchen was learned, where the mug was found"
    suggester.played("open kitchen door", True, "hall", ["table"])
    assert suggester.suggest(["go to kitchen"]) == "go to kitchen" and suggester.why.step == "way"
    assert suggester.why.text() == "on the way to the kitchen, where the mug was found"
    assert suggester.suggest(["look around"]) is None and suggester.why is None  # nothing offered, no reason
    suggester.played("go to kitchen", True, "kitchen", ["mug", "stove"])
    assert suggester.suggest(["pick up mug"]) == "pick up mug"
    assert (suggester.why.step, suggester.why.learned_in) == ("take", "Bring the table a mug.")
    assert suggester.why.to_dict()["known_from"] == ["Look at the stove.", "Bring the table a mug."]


def test_a_step_done_with_a_kind_of_thing_names_the_task_that_did_it():
    world = WorldMap([TO_GARDEN])
    suggester = MapSuggester(world, "Your task is to find an animal. Then move it to the table.", "garden", ["bird"])
    assert suggester.suggest(["pick up bird", "look around"]) == "pick up bird"
    why = suggester.why
    assert (why.target, why.kind, why.toward, why.step) == ("bird egg", True, "garden", "handle")
    assert why.learned_in == why.known_from[0] == TO_GARDEN.task
    assert why.text() == "what a past task like this did with the bird egg"


# An animal task as ScienceWorld plays one: found outside, carried to the box the task names, which
# the environment writes with the thing's own words ("move egg turtle egg in inventory to red box").
ANIMAL_TASK = (
    "Your task is to find a(n) animal. First, focus on the thing. Then, move it to the red box in the bathroom."
)
TURTLE_TO_BOX = Experience(
    world="house",
    task=ANIMAL_TASK,
    kind="find-animal",
    start="kitchen",
    carrying=["orange"],
    steps=[
        _step("kitchen", "open door to outside", in_view=["table"], carrying=["orange"]),
        _step("kitchen", "go to outside", "outside", ["egg turtle", "fence"], ["orange"]),
        _answer("outside", "focus on egg turtle", "egg turtle", ["egg turtle"], ["orange"]),
        _step("outside", "pick up egg turtle", in_view=["fence"], carrying=["orange", "turtle egg"]),
        _step("outside", "go to kitchen", "kitchen", ["table"], ["orange", "turtle egg"]),
        _step("kitchen", "open door to bathroom", in_view=["table"], carrying=["orange", "turtle egg"]),
        _step("kitchen", "go to bathroom", "bathroom", ["red box", "sink"], ["orange", "turtle egg"]),
        _step(
            "bathroom",
            "move egg turtle egg in inventory to red box",
            in_view=["egg turtle", "red box"],
            carrying=["orange"],
        ),
    ],
    won=True,
)


def test_a_box_another_episode_picked_up_does_not_replace_the_kind_where_the_environment_names_kinds():
    """An episode of another kind picked up the red box this task names (an LM's stray action).
    Where the environment names the task's kind, the map still looks first for what satisfied the
    kind (the egg, outside), then goes to the box; where it names none, a thing the task names
    that an episode took is what the task fetches, as in TextWorld."""
    box_taken = Experience(
        world="house",
        task=ANIMAL_TASK.replace("find a(n) animal", "find a(n) plant"),
        kind="find-plant",
        start="bathroom",
        steps=[_step("bathroom", "pick up red box", in_view=["sink"], carrying=["red box"])],
        won=False,
    )
    world = WorldMap([TURTLE_TO_BOX, box_taken])
    assert world.taking("red box") == "pick up red box"
    kinded = MapSuggester(world, ANIMAL_TASK, "kitchen", ["table"], ["orange"], kind="find-animal")
    assert [(t.name, t.kind, t.carry) for t in kinded.targets][:2] == [
        ("egg turtle", True, False),
        ("red box", False, False),
    ]
    assert kinded.suggest(["open door to outside", "look around"]) == "open door to outside"
    # The task's box is not in the bathroom this time: the map passes on, and never offers to take it.
    kinded.played("focus on egg turtle", True, "outside", ["egg turtle"], ["orange"], 50)
    kinded.played("pick up egg turtle", True, "outside", [], ["orange", "turtle egg"], 58)
    kinded.played("go to bathroom", True, "bathroom", ["sink"], ["orange", "turtle egg"], 66)
    assert kinded.target is None or kinded.target.name != "red box"
    kinded.played("go to kitchen", True, "kitchen", ["red box"], ["orange", "turtle egg"], 66)
    assert kinded.suggest(["pick up red box", "move egg turtle egg in inventory to red box"]) == (
        "move egg turtle egg in inventory to red box"
    )
    plain = MapSuggester(world, ANIMAL_TASK, "kitchen", ["table"], ["orange"])
    assert [(t.name, t.carry) for t in plain.targets][:1] == [("red box", True)]


def test_what_a_past_task_of_the_kind_left_with_what_its_task_named_is_done_with_what_is_held_now():
    world = WorldMap([TURTLE_TO_BOX])
    assert [(b.target, b.place, b.won) for b in world.brought] == [("red box", "bathroom", True)]
    task = ANIMAL_TASK.replace("red box", "purple box")  # a box no episode has seen
    suggester = MapSuggester(world, task, "outside", ["egg turtle"], ["orange"], kind="find-animal")
    assert suggester.target.kind and suggester.suggest(["focus on egg turtle"]) == "focus on egg turtle"
    suggester.played("focus on egg turtle", True, "outside", ["egg turtle"], ["orange"])
    held = ["orange", "turtle egg (an egg)"]
    suggester.played("pick up egg turtle", True, "outside", [], held)
    suggester.played("go to bathroom", True, "bathroom", ["purple box", "sink"], held)
    listed = ["move orange to purple box", "move egg turtle egg in inventory to sink", "look around"]
    assert suggester.suggest(listed) is None  # the box the task names is not where it can go
    listed.append("move egg turtle egg in inventory to purple box")
    assert suggester.suggest(listed) == "move egg turtle egg in inventory to purple box"
    assert (suggester.why.step, suggester.why.target, suggester.why.learned_in) == ("bring", "purple box", ANIMAL_TASK)
    assert suggester.why.text() == "what a past task like this did at the purple box with what it held"
    plain = MapSuggester(world, task, "bathroom", ["purple box"], ["orange"])  # no kind named
    plain.played("pick up egg turtle", True, "bathroom", ["purple box"], held)
    assert plain.suggest(listed) is None


@pytest.mark.parametrize("scored", [True, False])
def test_an_answer_the_environment_holds_under_another_name_is_brought_once_the_score_confirmed_it(scored):
    """ "pick up common toad" puts a frog egg in hand: where the score rose on "focus on common
    toad", the toad in hand is brought to the box the task names; with no score, the map cannot
    tell a frog egg is the toad, and brings nothing."""
    task = ANIMAL_TASK.replace("red box", "purple box")
    suggester = MapSuggester(
        WorldMap([TURTLE_TO_BOX]), task, "outside", ["common toad"], ["orange"], kind="find-animal"
    )
    suggester.played("focus on common toad", True, "outside", ["common toad"], ["orange"], 50 if scored else None)
    held = ["orange", "frog egg"]
    suggester.played("pick up common toad", True, "outside", [], held, 58 if scored else None)
    suggester.played("go to bathroom", True, "bathroom", ["purple box", "sink"], held, 66 if scored else None)
    listed = ["move orange to purple box", "move common toad to purple box", "pick up purple box"]
    assert suggester.suggest(listed) == ("move common toad to purple box" if scored else None)


def test_only_a_kind_the_environment_names_and_a_confirmed_episode_teach_what_to_bring():
    assert WorldMap([TURTLE_TO_BOX.model_copy(update={"kind": None})]).brought == []
    lost = TURTLE_TO_BOX.model_copy(update={"won": False})
    assert [b.won for b in WorldMap([lost]).brought] == [False]
    held = ["orange", "bird"]
    offered = []
    for world, kind in (
        (WorldMap([lost]), "find-animal"),
        (WorldMap([TURTLE_TO_BOX]), "find-plant"),
        (WorldMap([TURTLE_TO_BOX]), "find-animal"),
    ):
        suggester = MapSuggester(world, ANIMAL_TASK, "outside", [], ["orange"], kind=kind)
        suggester.played("pick up bird", True, "outside", [], held)
        suggester.played("go to bathroom", True, "bathroom", ["red box"], held)
        offered.append(suggester.suggest(["move bird to red box"]))
    assert offered == [None, None, "move bird to red box"]  # lost, another kind of task, confirmed


NON_LIVING_TASK = (
    "Your task is to find a(n) non-living thing. First, focus on the thing. "
    "Then, move it to the blue box in the kitchen."
)
# An episode that answered with the orange it held from the start, then left it in the box.
ORANGE_TO_BOX = Experience(
    world="house",
    task=NON_LIVING_TASK,
    kind="find-non-living-thing",
    start="hallway",
    in_view=["picture"],
    carrying=["orange"],
    steps=[
        _answer("hallway", "focus on orange", "orange", ["picture"], ["orange"]),
        _step("hallway", "go to kitchen", "kitchen", ["blue box", "table"], ["orange"]),
        _step("kitchen", "move orange to blue box", in_view=["blue box", "table"]),
    ],
    won=True,
)


def test_what_was_held_from_the_start_and_given_as_the_answer_is_brought():
    """The answer an episode gave may be a thing it held from the start: that one is brought to the
    box the task names, while what it merely held from the start is not."""
    world = WorldMap([ORANGE_TO_BOX])
    task = NON_LIVING_TASK.replace("blue box in the kitchen", "orange box in the bedroom")
    held = ["orange", "key"]
    listed = ["move key to orange box", "move orange to orange box", "look around"]
    answered = MapSuggester(world, task, "hallway", ["picture"], held, kind="find-non-living-thing")
    assert answered.suggest(["focus on orange", "focus on key"]) == "focus on orange"
    answered.played("focus on orange", True, "hallway", ["picture"], held)
    answered.played("go to bedroom", True, "bedroom", ["orange box", "bed"], held)
    assert answered.suggest(listed) == "move orange to orange box"
    assert answered.why.step == "bring" and answered.why.target == "orange box"
    unanswered = MapSuggester(world, task, "hallway", ["picture"], held, kind="find-non-living-thing")
    unanswered.played("go to bedroom", True, "bedroom", ["orange box", "bed"], held)
    assert unanswered.suggest(listed) is None  # nothing given as the answer, nothing gained


def _orange_answered_in_kitchen(task, steps_after, won):
    """An episode that answered with the kitchen's orange (the score rose), then did `steps_after`."""
    return Experience(
        world="house",
        task=task,
        kind="find-non-living-thing",
        start="kitchen",
        in_view=["orange", "blue box"],
        steps=[_answer("kitchen", "focus on orange", "orange", ["orange", "blue box"], []), *steps_after],
        won=won,
    )


def _orange_picked_up_and_brought(pick_up="pick up orange"):
    """A won episode that answered with the kitchen's orange, picked it up (`pick_up`) and brought
    it to the blue box its task named."""
    return _orange_answered_in_kitchen(
        NON_LIVING_TASK,
        [
            _step("kitchen", pick_up, in_view=["blue box"], carrying=["orange"]),
            _step("kitchen", "move orange to blue box", in_view=["blue box", "orange"]),
        ],
        True,
    )


FIND_ANIMAL_TASK = "Your task is to find a(n) animal. First, focus on the thing. Then, move it to the blue box."
# A lost find-animal episode whose answer, the blue jay outside, the score confirmed.
BLUE_JAY_ANSWERED = Experience(
    world="house",
    task=FIND_ANIMAL_TASK,
    kind="find-animal",
    start="outside",
    in_view=["blue jay"],
    steps=[_answer("outside", "focus on blue jay", "blue jay", ["blue jay"], [])],
    won=False,
)


def test_after_the_answer_a_won_episode_is_followed_rather_than_a_lost_one_that_stopped_there():
    """A lost episode's answer was confirmed but was all it did; a won one went on to pick the
    thing up and bring it. Having given the same answer, the map offers what the won one did next,
    and once the answer is in hand, brings it to the box this task names."""
    lost = _orange_answered_in_kitchen(
        NON_LIVING_TASK.replace("kitchen", "bathroom"), [_step("kitchen", "look around", in_view=["orange"])], False
    )
    won = _orange_picked_up_and_brought()
    task = NON_LIVING_TASK.replace("blue box in the kitchen", "green box in the bedroom")
    suggester = MapSuggester(WorldMap([lost, won]), task, "kitchen", ["orange", "table"], [], kind=won.kind)
    assert suggester.suggest(["focus on orange", "look around"]) == "focus on orange"
    suggester.played("focus on orange", True, "kitchen", ["orange", "table"], [])
    assert suggester.suggest(["pick up orange", "look around", "go to hallway"]) == "pick up orange"
    suggester.played("pick up orange", True, "kitchen", ["table"], ["orange"])
    suggester.played("go to bedroom", True, "bedroom", ["green box", "bed"], ["orange"])
    assert suggester.suggest(["move orange to green box", "look around"]) == "move orange to green box"
    assert suggester.why.step == "bring"


def test_a_kind_no_episode_won_is_carried_on_as_a_won_task_of_another_kind_was():
    """No find-animal episode gave a confirmed answer; a won find-non-living-thing one picked up its
    orange after focusing on it and brought it to the box its task named. Once the environment
    confirms this episode's answer (the score rose on "focus on blue jay"), the blue jay is picked
    up and brought to the box this task names; an answer the score did not rise on is not."""
    won = _orange_picked_up_and_brought()
    world = WorldMap([won])
    task = FIND_ANIMAL_TASK
    here = ["pick up blue jay", "look around", "go to kitchen"]

    def answered(score):
        suggester = MapSuggester(world, task, "outside", ["blue jay", "fence"], ["key"], kind="find-animal")
        assert not suggester.knows_answer()
        suggester.played("focus on blue jay", True, "outside", ["blue jay", "fence"], ["key"], score=score)
        return suggester

    assert answered(None).suggest(here) is None and answered(0).suggest(here) is None
    suggester = answered(50)
    assert suggester.next_step(here) == ("pick up blue jay", False, True)
    assert (suggester.why.step, suggester.why.learned_in) == ("after-answer", NON_LIVING_TASK)
    suggester.played("pick up blue jay", True, "outside", ["fence"], ["key", "blue jay"], score=50)
    suggester.played("go to kitchen", True, "kitchen", ["blue box", "table"], ["key", "blue jay"], score=50)
    listed = ["move key to blue box", "move blue jay to blue box", "look around"]
    assert suggester.suggest(listed) == "move blue jay to blue box"  # not the key held from the start
    assert suggester.why.step == "bring" and suggester.why.learned_in == NON_LIVING_TASK
    # A kind whose right answer alone was given before (that episode lost) is carried on the same
    # way; one with a won episode of its own follows its own episodes, not another kind's.
    answered_only = BLUE_JAY_ANSWERED
    for own_episode, across in ((answered_only, True), (answered_only.model_copy(update={"won": True}), False)):
        own = MapSuggester(WorldMap([won, own_episode]), task, "outside", ["blue jay"], [], kind="find-animal")
        assert own.knows_answer() and own.suggest(["focus on blue jay", *here]) == "focus on blue jay"
        own.played("focus on blue jay", True, "outside", ["blue jay"], [], score=50)
        own.suggest(here)
        assert (own.why is not None and own.why.step == "after-answer") is across


def test_what_a_won_episode_did_after_its_answer_is_not_offered_as_a_shorter_action_on_another_thing():
    """A won episode picked its orange up as "pick up orange in kitchen" (a list that tells two
    oranges apart). Carried on with this episode's apple tree, that is "pick up apple tree in
    kitchen", which this list holds only as "pick up apple", the kitchen's apple: not offered."""
    won = _orange_picked_up_and_brought("pick up orange in kitchen")
    task = "Your task is to find a(n) plant. First, focus on the thing. Then, move it to the blue box."
    suggester = MapSuggester(WorldMap([won]), task, "kitchen", ["apple tree", "apple"], [], kind="find-plant")
    suggester.played("focus on apple tree", True, "kitchen", ["apple tree", "apple"], [], score=50)
    assert suggester.suggest(["pick up apple", "look around"]) is None
    assert suggester.suggest(["pick up apple tree in kitchen", "pick up apple", "look around"]) == (
        "pick up apple tree in kitchen"
    )
    assert suggester.why.step == "after-answer"


def test_an_answer_is_missing_where_one_was_found_before_and_none_is_in_view_now():
    """A won episode answered a find-non-living-thing task with the kitchen's orange. In a new
    task of the kind, the kitchen with no orange in view is where the map knows no answer; with an
    orange there, or in a room no answer was found in, it is not."""
    won = _orange_answered_in_kitchen(
        NON_LIVING_TASK, [_step("kitchen", "move orange to blue box", in_view=["blue box", "orange"])], True
    )
    world = WorldMap([won])

    def standing(place, in_view):
        return MapSuggester(world, NON_LIVING_TASK, place, in_view, [], kind="find-non-living-thing")

    assert standing("kitchen", ["blue box", "table"]).answer_missing()
    assert not standing("kitchen", ["orange", "table"]).answer_missing()
    assert not standing("bathroom", ["bathtub"]).answer_missing()
    assert standing("kitchen", ["blue box"]).knows_answer()


def test_an_answer_of_its_own_confirmed_for_a_kind_no_episode_won_is_carried_on():
    """A lost find-animal episode's blue jay was confirmed outside; this episode finds no blue jay
    there and answers with the butterfly, which the score confirms. No find-animal episode won, so
    what the won find-non-living-thing episode did after its answer comes next: pick it up."""
    won = _orange_picked_up_and_brought()
    task = FIND_ANIMAL_TASK
    blue_jay = BLUE_JAY_ANSWERED
    here = ["focus on butterfly", "pick up butterfly", "look around"]
    for score, carried in ((50, True), (None, False)):
        suggester = MapSuggester(WorldMap([won, blue_jay]), task, "outside", ["butterfly"], [], kind="find-animal")
        assert suggester.knows_answer() and suggester.answer_missing()
        suggester.played("focus on butterfly", True, "outside", ["butterfly"], [], score=score)
        step = suggester.suggest(here)
        assert (step == "pick up butterfly" and suggester.why.step == "after-answer") is carried


# A way from the bathroom to the kitchen, learned on a task of no kind.
BATHROOM_TO_KITCHEN = Experience(
    world="house",
    task="Go to the kitchen.",
    start="bathroom",
    in_view=["sink"],
    steps=[_step("bathroom", "go to kitchen", "kitchen", ["table"])],
    won=True,
)


def test_a_confirmed_answer_held_from_the_start_is_given_where_the_agent_stands():
    """An orange in hand satisfied the kind before: the map offers the answer in the bathroom the
    episode starts in, not the way to the kitchen where one was found; once given, the answer is
    done with and brought. A key in hand is no answer: the map leads to the kitchen."""
    world = WorldMap([_orange_picked_up_and_brought(), BATHROOM_TO_KITCHEN])
    task = NON_LIVING_TASK.replace("blue box in the kitchen", "orange box in the bedroom")
    listed = ["focus on orange", "focus on sink", "go to kitchen", "look around"]
    holding = MapSuggester(world, task, "bathroom", ["sink"], ["orange"], kind="find-non-living-thing")
    assert holding.suggest(listed) == "focus on orange"
    assert holding.why.step == "handle"
    holding.played("focus on orange", True, "bathroom", ["sink"], ["orange"], score=50)
    holding.played("go to bedroom", True, "bedroom", ["orange box", "bed"], ["orange"], score=50)
    assert holding.suggest(["move orange to orange box", "look around"]) == "move orange to orange box"
    keyed = MapSuggester(world, task, "bathroom", ["sink"], ["key"], kind="find-non-living-thing")
    assert keyed.suggest([*listed, "focus on key"]) == "go to kitchen"


def test_with_two_things_of_one_name_in_view_the_one_in_hand_is_given_as_the_answer():
    """Two oranges in view, the list says where each is ("focus on orange in bowl", "... in
    inventory") and names no plain "focus on orange": the held one is offered, vouched for as the
    plain answer was."""
    world = WorldMap([_orange_picked_up_and_brought()])
    suggester = MapSuggester(
        world, NON_LIVING_TASK, "kitchen", ["orange", "blue box"], ["orange"], kind="find-non-living-thing"
    )
    listed = ["focus on orange in bowl", "focus on orange in inventory", "pick up orange in bowl"]
    assert suggester.suggest(listed) == "focus on orange in inventory"
    assert suggester.vouched("focus on orange in inventory")
    assert not suggester.vouched("focus on blue box in kitchen")


def test_a_thing_grown_since_is_answered_as_the_past_one_was():
    """A past episode answered with the apple tree; this task's greenhouse lists an "adult apple
    tree" (things grow between tasks): the map offers it, vouched for as the past answer was. An
    apple is not an apple tree."""
    task = "Your task is to find a(n) plant. First, focus on the thing. Then, move it to the red box."
    world = WorldMap([_won_by_answer(task, "find-plant", "apple tree", "greenhouse")])
    grown_tree = MapSuggester(world, task, "greenhouse", ["adult apple tree", "jug"], [], kind="find-plant")
    assert grown_tree.suggest(["focus on jug", "focus on adult apple tree"]) == "focus on adult apple tree"
    assert grown_tree.vouched("focus on adult apple tree")
    assert not grown_tree.vouched("focus on apple")
    other = MapSuggester(world, task, "greenhouse", ["apple", "jug"], [], kind="find-plant")
    assert other.suggest(["focus on jug", "focus on apple"]) is None
    assert grown("adult apple tree", "apple tree") and not grown("apple tree", "apple")
    assert not grown("apple tree", "apple tree") and not grown("tree apple", "apple tree")


def test_an_action_is_found_as_the_list_writes_it_saying_where_the_thing_is():
    listed = ["focus on orange in bowl", "focus on orange in inventory", "focus on orange box"]
    assert located_form("focus on orange", listed) == "focus on orange in inventory"
    assert located_form("focus on orange", listed[:1]) == "focus on orange in bowl"
    assert located_form("focus on apple", listed) is None
    assert admissible_form("focus on orange", listed) is None  # a longer form is not the same action


def test_an_answer_renamed_in_hand_as_it_changed_is_still_brought():
    """The score confirmed "focus on adult apple tree"; picked up, it is "apple tree in the adult
    stage" in hand, and later "dead apple tree": still the answer, brought to the box the task
    names. Once put down, nothing of it is brought."""
    task = "Your task is to find a(n) plant. First, focus on the thing. Then, move it to the orange box."
    world = WorldMap([_orange_picked_up_and_brought()])
    suggester = MapSuggester(world, task, "greenhouse", ["adult apple tree"], [], kind="find-plant")
    suggester.played("focus on adult apple tree", True, "greenhouse", ["adult apple tree"], [], 50)
    suggester.played("pick up adult apple tree", True, "greenhouse", [], ["apple tree in the adult stage"], 58)
    listed = ["move apple tree to orange box", "pick up orange box"]
    suggester.played("go to bathroom", True, "bathroom", ["orange box"], ["dead apple tree"], 66)
    assert suggester.suggest(listed) == "move apple tree to orange box"
    suggester.played("put down dead apple tree", True, "bathroom", ["orange box", "dead apple tree"], [], 66)
    assert suggester.suggest(listed) is None
