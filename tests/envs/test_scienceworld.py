"""The ScienceWorld adapter against the real simulator (one shared JVM for the session)."""

import pytest

from rbdspy.envs import play
from rbdspy.envs.scienceworld_actions import TEMPLATE_HINTS, ambiguity_choices

SHORT = "lifespan-longest-lived"  # 5-6 step gold paths


def test_thirty_task_types_with_disjoint_splits(sw_env):
    types = sw_env.task_types()
    assert len(types) == 30 and "boil" in types
    for task_type in types:
        splits = sw_env.variations(task_type)
        train, dev, test = (set(splits[s]) for s in ("train", "dev", "test"))
        assert train and dev and test, task_type
        assert not (train & dev) and not (train & test) and not (dev & test), task_type
    ids = {s: {r.id for r in sw_env.tasks(s, [SHORT])} for s in ("train", "dev", "test")}
    assert all(i.startswith(f"scienceworld/{SHORT}/") for i in ids["train"])
    assert not (ids["train"] & ids["dev"]) and not (ids["dev"] & ids["test"])


def test_gold_path_succeeds_and_a_truncated_one_fails(sw_env):
    ref = sw_env.tasks("train", [SHORT])[0]
    gold = sw_env.gold_path(ref)
    assert gold and not gold[0].startswith("ERROR")
    won = play(sw_env, ref, gold)
    assert won.outcome is True and won.metadata["final_score"] == 100 and won.metadata["max_score"] == 100
    assert "life span" in won.task  # the task description, not the id
    # Stop one action before the win (gold paths can go on after the task is won).
    lost = play(sw_env, ref, gold[: won.metadata["n_steps"] - 1])
    assert lost.outcome is False and lost.metadata["final_score"] < 100


def test_wrong_focus_fails_and_ends_the_episode(sw_env):
    ref = sw_env.tasks("dev", [SHORT])[0]
    sw_env.reset(ref, admissible=False)
    result = sw_env.step("focus on agent", admissible=False)
    assert result.done and not result.won and result.score < 0 and sw_env.success is False


def test_step_results_and_compact_admissible_actions(sw_env):
    ref = sw_env.tasks("train", ["boil"])[0]
    obs = sw_env.reset(ref)
    assert "boil" in obs.task_description.lower() and "hallway" in obs.text
    assert obs.admissible[:3] == ["look around", "inventory", "task"]
    concrete = [a for a in obs.admissible if a not in TEMPLATE_HINTS]
    assert len(concrete) <= sw_env.max_admissible
    assert not any(a.startswith("connect") for a in concrete)  # no electrical contacts in the hallway
    assert any(a.startswith("open door to") for a in concrete)
    assert obs.admissible[-len(TEMPLATE_HINTS) :] == list(TEMPLATE_HINTS)

    nonsense = sw_env.step("fly to the moon")
    assert nonsense.valid is False and not nonsense.done and "No known action" in nonsense.observation
    empty = sw_env.step("   ", admissible=False)
    assert empty.valid is False

    door = next(a for a in concrete if a.startswith("open door to"))
    opened = sw_env.step(door)
    assert opened.valid and not opened.done and opened.score >= 0


def test_ambiguous_actions_offer_numbered_choices(sw_env):
    sw_env.reset(sw_env.tasks("train", ["boil"])[0], admissible=False)
    result = sw_env.step("open door")
    assert result.observation.startswith("Ambiguous request")
    assert result.admissible and all(a.isdigit() for a in result.admissible)
    assert ambiguity_choices("You open the door.") is None


def test_task_ids_are_checked_against_their_split(sw_env):
    train_variation = sw_env.variations(SHORT)["train"][0]
    with pytest.raises(ValueError, match="is in the train split"):
        sw_env.reset(f"scienceworld/{SHORT}/test/{train_variation}")
    with pytest.raises(ValueError, match="unknown task type"):
        sw_env.reset("scienceworld/boil-an-egg/train/0")
    unseen = sw_env.variations(SHORT)["train"][-1]
    sw_env.gold_path(f"scienceworld/{SHORT}/train/{unseen}")  # a first call loads the task: no episode left
    with pytest.raises(RuntimeError, match="reset"):
        sw_env.step("look around")


def test_describe_matches_the_episode(sw_env):
    ref = sw_env.tasks("test", [SHORT])[0]
    text = sw_env.describe(ref)
    assert text == sw_env.reset(ref, admissible=False).task_description


def test_every_listed_action_is_one_the_simulator_accepts(sw_env):
    # The simulator's valid list also names things inside closed containers ("cup containing
    # yellow paint in cupboard"), which its parser refuses: the adapter lists none of them.
    task = "scienceworld/find-plant/train/10"  # starts in the art studio, cups in a closed cupboard
    listed = [a for a in sw_env.reset(task).admissible if "OBJ" not in a]
    assert len(listed) > 20
    refused = []
    for action in listed:
        sw_env.reset(task, admissible=False)
        if not sw_env.step(action, admissible=False).valid:
            refused.append(action)
    assert refused == []


def test_whereabouts_name_the_room_what_is_in_reach_and_what_is_held(sw_env):
    first = sw_env.reset("scienceworld/find-plant/train/10")
    assert first.whereabouts.place == "art studio" and first.whereabouts.carrying == ["orange"]
    assert "table" in first.whereabouts.in_view and "agent" not in first.whereabouts.in_view
    assert "hallway" not in first.whereabouts.in_view  # a room is a place, not a thing
    assert sw_env.world_of("scienceworld/find-plant/train/10") == "scienceworld/house"
    sw_env.step("open door to hallway")
    moved = sw_env.step("go to hallway")
    assert moved.whereabouts.place == "hallway"


def test_the_way_out_opens_the_first_door_to_a_room_not_visited_then_goes_through(sw_env):
    sw_env.reset("scienceworld/find-plant/train/0")  # the hallway: six closed doors
    assert sw_env.way_out(["hallway"]) == "open door to art studio"
    assert sw_env.way_out(["hallway", "art studio", "Bedroom"]) == "open door to greenhouse"  # any case
    assert sw_env.step("open door to greenhouse").valid
    assert sw_env.way_out(["hallway", "art studio", "bedroom"]) == "go to greenhouse"
    # Every room next to this one visited: back towards the one the agent was in longest ago.
    rooms = ["hallway", "art studio", "bedroom", "greenhouse", "kitchen", "living room", "workshop"]
    assert sw_env.way_out(rooms) == "open door to art studio"
    assert sw_env.way_out(["greenhouse", *rooms]) == "go to greenhouse"


def test_an_agent_that_explores_leaves_a_room_it_stays_in(sw_env):
    """With `explore`, an LM that only ever looks around is taken through a door after
    `EXPLORE_AFTER` steps in one place; without it, the agent never leaves its start room."""
    import dspy
    from dspy.utils import DummyLM

    from rbdspy.agent import EnvAgent, Explore, LMChoice
    from rbdspy.agent.policies import EXPLORE_AFTER

    task = "scienceworld/find-plant/train/10"  # starts in the art studio, its one door shut
    for explore in (True, False):
        lm = DummyLM([{"action": "look around"}] * (EXPLORE_AFTER + 3))
        policies = [Explore(), LMChoice()] if explore else [LMChoice()]
        with dspy.context(lm=lm):
            agent = EnvAgent(sw_env, max_steps=EXPLORE_AFTER + 3, policies=policies)
            steps = agent(task="t", task_id=task).trajectory.steps
        played = [s for s in steps if s.role == "agent"]
        places = {s.metadata["whereabouts"]["place"] for s in steps if s.role == "env"}
        if explore:
            assert [s.content for s in played if s.metadata.get("explored")] == ["open door", "go to hallway"]
            assert [s.content for s in played[:EXPLORE_AFTER]] == ["look around"] * EXPLORE_AFTER
            assert places == {"art studio", "hallway"} and len(lm.history) == len(played) - 2
        else:
            assert places == {"art studio"} and not any(s.metadata.get("explored") for s in played)


def test_a_dead_end_is_left_the_way_back_and_the_exploring_goes_on_through_visited_places(sw_env):
    """Back in a room whose only door leads somewhere visited, the way out leads back there and,
    without an LM call, on to a room not visited yet."""
    import dspy
    from dspy.utils import DummyLM

    from rbdspy.agent import EnvAgent, Explore, LMChoice
    from rbdspy.agent.policies import EXPLORE_AFTER

    task = "scienceworld/find-plant/train/10"  # starts in the art studio, its one door to the hallway
    looks = [{"action": "look around"}] * EXPLORE_AFTER
    lm = DummyLM([*looks, {"action": "go to art studio"}, *looks, {"action": "look around"}])
    with dspy.context(lm=lm):
        agent = EnvAgent(sw_env, max_steps=2 * EXPLORE_AFTER + 6, policies=[Explore(), LMChoice()])
        steps = agent(task="t", task_id=task).trajectory.steps
    played = [s for s in steps if s.role == "agent"]
    explored = [s.content for s in played if s.metadata.get("explored")]
    assert explored == ["open door", "go to hallway", "go to hallway", "open bedroom door", "go to bedroom"]
    assert steps[-1].metadata["whereabouts"]["place"] == "bedroom" and len(lm.history) == len(played) - 5


def test_a_right_answer_is_stored_with_the_score_it_raised_and_confirms_the_kind(sw_env):
    """An episode that gave the right answer and stopped there is lost, yet its answer step holds
    the thing and the higher score, so the map counts that thing as satisfying the task's kind."""
    from rbdspy.envs.base import play
    from rbdspy.maps.experience import experience_of
    from rbdspy.maps.world_map import WorldMap

    task = "scienceworld/find-plant/train/10"
    gold = sw_env.gold_path(task)
    focus = next(i for i, action in enumerate(gold) if action.startswith("focus on"))
    experience = experience_of(play(sw_env, task, gold[: focus + 1], places=True))
    answer = experience.steps[-1]
    assert experience.won is False and experience.kind == "find-plant"
    assert answer.answered == gold[focus].removeprefix("focus on ") and answer.score > 0
    assert all((step.score or 0) < answer.score for step in experience.steps[:-1])
    world = WorldMap(experience.world, [experience])
    assert world.answers_of("find-plant") == [answer.answered.lower()] and world.confirmed(
        "find-plant", answer.answered
    )
    procedure = world.kind_procedures("find-plant")[0]
    assert not procedure.won and str(procedure.steps[-1].act) == gold[focus]  # the part the score confirmed
