"""Routes read from remembered action sequences: the next step towards what the task names, from
where the agent is, never an action the environment does not accept now."""

from __future__ import annotations

import pytest
from dspy.utils import DummyLM

from rbdspy.action_text import memory_actions, opposite, sequences, simplify
from rbdspy.envs import EnvAgent
from rbdspy.envs.memory_routes import RouteSuggester, join, route, task_things
from rbdspy.memory.formatting import format_memory_block

MUG_AND_STAND = "> go north | > take mug | > go south | > put mug on stand"
BOOK_TO_FRIDGE = "> take book from armchair | > go north | > go east | > insert book into fridge"


def _block(*contents: str) -> str:
    return format_memory_block([{"title": f"t{i}", "description": "d", "content": c} for i, c in enumerate(contents)])


def test_the_things_a_task_names_in_order():
    assert task_things("Put the loaf of bread on the stand.") == [frozenset({"loaf", "bread"}), frozenset({"stand"})]
    assert task_things("Put the type 7 passkey in the fridge.") == [frozenset({"type", "7", "passkey"}), {"fridge"}]
    assert task_things("Eat the candy bar.\n(Task as given: something else)") == [frozenset({"candy", "bar"})]
    assert task_things("Open the chest.") == [frozenset({"chest"})]
    assert task_things("") == []


def test_sequences_are_read_per_item_in_either_format():
    block = _block(MUG_AND_STAND, "no actions here", "> go west -> You are in a pantry. | > take key -> Taken.")
    assert sequences(block) == [
        ["go north", "take mug", "go south", "put mug on stand"],
        ["go west", "take key"],
    ]
    assert memory_actions(block)[-2:] == ["go west", "take key"]


def test_moves_that_undo_each_other_cancel():
    assert simplify(["go north", "go south", "take mug", "go east", "go west", "go west"]) == ["take mug", "go west"]
    assert opposite("move east") == "move west" and opposite("take mug") == "take mug"


def test_the_way_from_where_the_agent_is_leaves_its_moves_where_they_left_the_route():
    way = ["go north", "open portal", "go east", "take gummy bear"]
    assert join([], way) == way
    assert join(["go north"], way) == ["open portal", "go east", "take gummy bear"]
    assert join(["go north", "go east"], way) == ["take gummy bear"]
    assert join(["go north", "go west"], way) == ["go east", "open portal", "go east", "take gummy bear"]
    assert join(["go south"], way) == ["go north", "go north", "open portal", "go east", "take gummy bear"]


def test_a_route_to_fetch_ends_with_the_taking_and_one_to_bring_stops_before_the_thing():
    seqs = sequences(_block(MUG_AND_STAND, BOOK_TO_FRIDGE))
    assert route(seqs, frozenset({"mug"}), fetch=True) == ["go north", "take mug"]
    # The stand is where the start is (north then south); the fridge is north-east of it.
    assert route(seqs, frozenset({"stand"}), fetch=False) == []
    assert route(seqs, frozenset({"fridge"}), fetch=False) == ["go north", "go east"]
    # "take book from armchair" names the armchair: it is at the start.
    assert route(seqs, frozenset({"armchair"}), fetch=False) == []
    assert route(seqs, frozenset({"apple"}), fetch=True) is None


def test_a_route_to_fetch_skips_a_sequence_that_only_uses_the_thing():
    seqs = [["put mug on stand"], ["go west", "open door", "go west", "take mug"]]
    assert route(seqs, frozenset({"mug"}), fetch=True) == ["go west", "open door", "go west", "take mug"]


def test_the_suggester_fetches_then_brings_back_from_where_the_agent_is():
    suggester = RouteSuggester(_block(BOOK_TO_FRIDGE, MUG_AND_STAND), "Put the mug in the fridge.")
    assert suggester.suggest(["go north", "go west", "take stapler"]) == "go north"
    suggester.played("go north", valid=True)
    assert suggester.suggest(["take mug", "go south", "go east"]) == "take mug"
    suggester.played("examine mug", valid=True)  # looking at it is not taking it
    assert suggester.suggest(["take mug", "go south", "go east"]) == "take mug"
    suggester.played("take mug", valid=True)
    # the fridge is north-east of the start, and the agent is north of it already
    assert suggester.suggest(["go south", "go east", "insert mug into fridge"]) == "go east"
    suggester.played("go east", valid=True)
    # there: the final action is the agent's own choice, never suggested
    assert suggester.suggest(["insert mug into fridge", "go west"]) is None


def test_the_suggester_offers_nothing_where_the_way_is_not_open():
    suggester = RouteSuggester(_block(MUG_AND_STAND), "Take the mug.")
    assert suggester.suggest(["go east", "take stapler"]) is None  # north is not open here
    suggester.played("go east", valid=True)
    assert suggester.suggest(["go west", "go north"]) == "go west"  # back to the start first
    suggester.played("go north", valid=False)  # a move the environment refused changes nothing
    assert suggester.moves == ["go east"]


def test_a_door_already_open_is_passed_over():
    suggester = RouteSuggester(_block("> go west | > open passageway | > go south | > take mop"), "Take the mop.")
    suggester.played("go west", valid=True)
    assert suggester.suggest(["close passageway", "go south", "go east"]) == "go south"
    assert suggester.suggest(["open passageway", "go east"]) == "open passageway"


def test_no_memory_or_no_route_suggests_nothing():
    assert RouteSuggester("", "Take the mug.").suggest(["take mug"]) is None
    assert RouteSuggester(_block(MUG_AND_STAND), "Eat the apple.").suggest(["go north"]) is None
    done = RouteSuggester(_block(MUG_AND_STAND), "Eat the mug.")
    done.played("take mug", valid=True)
    assert done.suggest(["eat mug", "go north"]) is None  # fetched, and nothing to bring it to


@pytest.fixture(scope="module")
def house(tmp_path_factory):
    pytest.importorskip("textworld")
    from rbdspy.envs.textworld_env import TextWorldHouses
    from rbdspy.envs.textworld_house import HouseSpec

    spec = HouseSpec(n_rooms=4, n_objects=8, min_walkthrough=1, max_walkthrough=4)
    env = TextWorldHouses(worlds=(3,), spec=spec, cache_dir=tmp_path_factory.mktemp("tw"), pool={"train": 3, "dev": 3})
    yield env
    env.close()


def _follower(house, quest) -> DummyLM:
    """Plays the suggestion when there is one, else the quest's own last action."""
    every_action = {a for q in house.catalogue(quest.world_seed).quests() for a in q.walkthrough}
    every_action |= {f"go {d}" for d in ("north", "south", "east", "west")}
    answers = {f"[Memory suggests: {a}]": {"action": a} for a in sorted(every_action, key=len, reverse=True)}
    answers["admissible_actions"] = {"action": quest.walkthrough[-1]}
    return DummyLM(answers)


def test_an_agent_that_plays_every_suggestion_wins_each_quest_served_its_own_walkthrough(house):
    import dspy

    task_ids = [t.id for t in house.tasks("train") + house.tasks("dev")]
    assert len(task_ids) == 6
    for task_id in task_ids:
        quest = house.quest(task_id)
        memory = _block(" | ".join(f"> {a}" for a in quest.walkthrough))
        with dspy.context(lm=_follower(house, quest)):
            pred = EnvAgent(house, max_steps=len(quest.walkthrough) + 2, suggest=True)(
                task=quest.objective, task_id=task_id, memory=memory
            )
        played = [s.content for s in pred.trajectory.steps if s.role == "agent"]
        assert pred.trajectory.outcome is True, (quest.objective, quest.walkthrough, played)
        assert len(played) <= len(quest.walkthrough)


def test_every_suggestion_is_admissible_whatever_the_memory(house):
    import dspy

    task_id = house.tasks("dev")[0].id
    lm = DummyLM([{"action": "look"}] * 6)
    memory = _block(*(" | ".join(f"> {a}" for a in q.walkthrough) for q in house.catalogue(3).quests()))
    with dspy.context(lm=lm):
        EnvAgent(house, max_steps=3, suggest=True)(task="t", task_id=task_id, memory=memory)
    for call in lm.history:
        prompt = call["messages"][-1]["content"]
        admissible = prompt.split("[[ ## admissible_actions ## ]]")[1].split("[[ ##")[0].split("\n")
        if "[Memory suggests: " in prompt:
            suggested = prompt.split("[Memory suggests: ")[1].split("]")[0]
            assert suggested in [a.strip() for a in admissible]


def test_out_of_sight_memory_still_suggests_but_is_not_in_the_prompt(house):
    import dspy

    task_id = house.tasks("dev")[0].id
    quest = house.quest(task_id)
    memory = _block(" | ".join(f"> {a}" for a in quest.walkthrough))
    for shown in (True, False):
        lm = DummyLM([{"action": "look"}])
        with dspy.context(lm=lm):
            EnvAgent(house, max_steps=1, suggest=True, show_memory=shown)(task="t", task_id=task_id, memory=memory)
        prompt = lm.history[0]["messages"][-1]["content"]
        assert f"[Memory suggests: {quest.walkthrough[0]}]" in prompt
        assert ("<<<MEMORY" in prompt) is shown


SEEN = (
    "> take book from armchair || "
    "Seen: start = book, armchair, stand ; go north = fridge, mug ; go north then go east = candy bar"
)


def test_places_are_written_and_read_back_beside_the_actions():
    from rbdspy.action_text import format_places, places

    seen = places(_block(SEEN))
    assert seen == [
        [
            ([], ["book", "armchair", "stand"]),
            (["go north"], ["fridge", "mug"]),
            (["go north", "go east"], ["candy bar"]),
        ]
    ]
    assert format_places(seen[0]) == SEEN.split(" || ")[1]
    assert sequences(_block(SEEN)) == [["take book from armchair"]]  # the places hold no actions
    # an observation in trajectory memory is not a place, nor is a path that is not all moves
    assert places(_block("> go west -> Seen: a pantry.", "Seen: take mug = mug")) == []
    # an episode with no action accepted is recorded as its places only, after its world marker
    assert places("[in textworld/3] Seen: start = keycard, safe") == [[([], ["keycard", "safe"])]]


def test_a_thing_no_action_names_is_routed_to_where_it_was_seen():
    from rbdspy.action_text import places

    seen = places(_block(SEEN))
    assert route([], frozenset({"candy", "bar"}), fetch=True, seen=seen) == ["go north", "go east"]
    assert route([], frozenset({"fridge"}), fetch=False, seen=seen) == ["go north"]
    assert route([], frozenset({"stand"}), fetch=False, seen=seen) == []  # at the start
    assert route([], frozenset({"apple"}), fetch=True, seen=seen) is None
    # an action naming the thing comes first: it also says how it was taken
    assert route([["go west", "take mug"]], frozenset({"mug"}), fetch=True, seen=seen) == ["go west", "take mug"]


def test_the_suggester_fetches_then_brings_to_a_place_seen():
    suggester = RouteSuggester(_block(SEEN), "Put the mug on the stand.")
    assert suggester.suggest(["go north", "take book from armchair"]) == "go north"
    suggester.played("go north", valid=True)
    assert suggester.suggest(["take mug", "go south"]) is None  # there: taking it is the agent's own step
    suggester.played("take mug", valid=True)
    assert suggester.suggest(["go south", "go east"]) == "go south"


def test_the_places_an_agent_saw_are_true_of_the_world(house):
    """An episode played through EnvAgent notes what is in view; the record's places, followed
    from a fresh start of any quest of the world, lead to where each thing listed can be looked at."""
    import dspy

    from rbdspy.action_text import places
    from rbdspy.lessons.action_record import action_record

    quests = [house.quest(t.id) for t in house.tasks("train") + house.tasks("dev")]
    wander = [a for q in quests for a in q.walkthrough] + [f"go {d}" for d in ("north", "east", "south", "west") * 2]
    played = quests[0]
    with dspy.context(lm=DummyLM([{"action": a} for a in wander])):
        pred = EnvAgent(house, max_steps=len(wander))(task=played.objective, task_id=house.tasks("train")[0].id)
    record = action_record(played.objective, pred.trajectory, won=False, places=True)
    assert record.content.startswith("[in textworld/3] "), record.content  # the world it holds in
    seen = places(_block(record.content))[0]
    assert seen[0][0] == [] and len(seen) >= 2, record.content
    other = house.tasks("dev")[-1].id
    for moves, things in seen:
        house.reset(other)
        for move in moves:
            assert house.step(move).valid, (moves, record.content)
        in_view = {a.lower() for a in house.admissible_actions()}
        assert all(f"examine {t}" in in_view for t in things), (moves, things, sorted(in_view))


def test_a_record_of_another_world_offers_no_way():
    from rbdspy.action_text import in_scope, scoped

    here, there = scoped("textworld/1") + SEEN, scoped("textworld/2") + "> go west | > take mug"
    block = _block(there, here, MUG_AND_STAND)
    assert sequences(in_scope(block, "textworld/1")) == [["take book from armchair"], MUG_AND_STAND[2:].split(" | > ")]
    assert in_scope(block, None).count("Content:") == 1  # only the unscoped record
    suggester = RouteSuggester(block, "Put the mug on the stand.", scope="textworld/1")
    assert suggester.suggest(["go north", "go west"]) == "go north"  # not world 2's "go west"
    assert RouteSuggester(_block(there), "Take the mug.", scope="textworld/1").suggest(["go west"]) is None
