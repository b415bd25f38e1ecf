"""A user's own dspy.ReAct over an environment's tools, on a scripted LM: it plays the episode
through `look` and `act`, the trajectory records what it did, a bank around it records the episode
and hands it the world's map, which its tools name only with `show_map`; the same with ReActV2."""

from __future__ import annotations

import dspy
import pytest
from dspy.utils import DummyLM

from rbdspy.agent.user_react import MISFORMATTED, UserReAct
from rbdspy.loop.reasoning_bank import ReasoningBank
from rbdspy.loop.retriever import MemoryRetriever
from rbdspy.memory import MemoryStore
from rbdspy.memory.embedders import HashEmbedder
from tests.house_testing import react_script, small_house


@pytest.fixture(scope="module")
def house(tmp_path_factory):
    env = small_house(tmp_path_factory.mktemp("tw"), train=3)
    yield env
    env.close()


def test_a_plain_react_plays_the_episode_through_its_tools(house):
    task = house.tasks("train", limit=1)[0]
    way = house.gold_path(task)
    agent = UserReAct(house, max_iters=len(way) + 2)
    with dspy.context(lm=DummyLM(react_script(way))):
        pred = agent(task=house.describe(task), task_id=task.id)
    played = [s.content for s in pred.trajectory.steps if s.role == "agent"]
    assert played == way and pred.trajectory.outcome is True
    assert pred.trajectory.metadata["world"] == "textworld/3"
    with pytest.raises(ValueError, match="needs task_id"):
        agent(task="t")
    with pytest.raises(RuntimeError, match="inside an episode"):
        agent.look()


def test_an_episode_the_lm_broke_ends_as_it_stands_and_says_why(house):
    task = house.tasks("train", limit=1)[0]
    agent = UserReAct(house, max_iters=3)
    with dspy.context(lm=DummyLM([{"nothing": "that parses"}] * 4)):
        pred = agent(task=house.describe(task), task_id=task.id)
    assert pred.trajectory.outcome is False and pred.answer.startswith("The agent stopped")
    assert "Error" in pred.trajectory.metadata["stopped"]  # the records keep why (bench: `stopped`)


def test_a_bank_records_its_episodes_and_serves_the_map_that_its_tools_name_with_show_map(house, tmp_path):
    first, second = house.tasks("train", limit=2)
    with MemoryStore(tmp_path / "bank", HashEmbedder(dim=32)) as store:
        retriever = MemoryRetriever(store, k=10, min_similarity=None)
        bank = ReasoningBank(UserReAct(house, show_map=True), store, retriever=retriever, trust_outcome=True)
        gold = house.gold_path(first)
        with dspy.context(lm=DummyLM([*react_script(gold), {"lessons": []}, {"lessons": []}])):
            won = bank(task=house.describe(first), task_id=first.id)
        assert won.trajectory.outcome is True
        world = bank.learner.maps.map_for("textworld/3")
        assert world.episodes == 1  # the episode, recorded with its places, is in the world's map
        from rbdspy.maps.tools import EnvironmentTools

        assert EnvironmentTools(house, second, world_map=world).guide is not None
        assert (
            EnvironmentTools(house, second).guide is None
            and "Memory suggests" not in EnvironmentTools(house, second).look()
        )
        # Without show_map the agent's tools get no map, whatever the bank hands it.
        plain = UserReAct(house)
        with dspy.context(lm=DummyLM(react_script([]))):
            plain(task=house.describe(second), task_id=second.id, world_map=world)
        assert plain._episode is None


def _react_v2_script(actions):
    """ReActV2's turns: each action as a tool call to `act`, then `submit` with the answer."""
    calls = [{"name": "act", "args": {"action": a}} for a in actions] + [{"name": "submit", "args": {"answer": "done"}}]
    return [{"next_thought": "next", "tool_calls": {"tool_calls": [call]}} for call in calls]


@pytest.mark.parametrize("react, script", [(dspy.ReAct, react_script), (dspy.ReActV2, _react_v2_script)])
@pytest.mark.parametrize("look_tool", [True, False])
def test_the_same_agent_plays_on_both_of_dspys_react_modules(house, react, script, look_tool):
    task = house.tasks("train", limit=1)[0]
    way = house.gold_path(task)
    agent = UserReAct(house, max_iters=len(way) + 2, react=react, look_tool=look_tool, play_to_end=not look_tool)
    with dspy.context(lm=DummyLM(script(way))):
        pred = agent(task=house.describe(task), task_id=task.id)
    assert isinstance(agent.react, react) and pred.trajectory.outcome is True
    assert [s.content for s in pred.trajectory.steps if s.role == "agent"] == way


def test_the_papers_bank_hands_no_map_and_rbdspys_does(house, tmp_path):
    from rbdspy.loop.presets import default_bank, paper_bank

    agent = UserReAct(house, show_map=True)
    with MemoryStore(tmp_path / "a", HashEmbedder(dim=32)) as store:
        assert default_bank(agent, store)._takes_map and not paper_bank(agent, store)._takes_map
        assert not ReasoningBank(agent, store, serve_map=False)._takes_map


def test_a_won_react_episode_is_served_to_the_next_task_as_demos_of_its_own_react_steps(house, tmp_path):
    from rbdspy.loop.demo_memory import DemoMemory

    first, second = house.tasks("train", limit=2)
    with MemoryStore(tmp_path / "bank", HashEmbedder(dim=32)) as store:
        retriever = MemoryRetriever(store, k=1, min_similarity=None)
        bank = DemoMemory(UserReAct(house), store, retriever=retriever, trust_outcome=True)
        gold = house.gold_path(first)
        lm = DummyLM([*react_script(gold), *react_script([])])
        with dspy.context(lm=lm):
            won = bank(task=house.describe(first), task_id=first.id)
            bank(task=house.describe(second), task_id=second.id)
        # In the house every episode is also recorded for the world's map: the record carries no demos.
        (item,) = [m for m in won.memories_added if m.demos]
        (record,) = [m for m in won.memories_added if not m.demos]
        assert record.experience is not None and record.experience.world is not None
        assert {d.predictor for d in item.demos} == {"react.react", "react.extract.predict"}
        steps = [d for d in item.demos if d.predictor == "react.react"]
        assert [d.outputs["next_tool_args"] for d in steps[: len(gold)]] == [{"action": a} for a in gold]
        # The second episode's first ReAct step is shown the first episode's calls, as DSPy shows a demo.
        first_step_of_second = "\n".join(str(m["content"]) for m in lm.history[len(gold) + 2]["messages"])
        assert f'{{"action": "{gold[0]}"}}' in first_step_of_second
        assert bank.agent.react.react.demos == []


def test_a_starter_shows_the_react_one_made_up_episode_in_the_environments_words(house):
    class ShowsNothing:
        pass

    with pytest.raises(ValueError, match="ShowsActions"):
        UserReAct(ShowsNothing(), starter=True)
    example = house.action_example()
    agent = UserReAct(house, starter=True)
    demos = agent.react.react.demos
    n = len(example.steps)
    assert [d.next_tool_name for d in demos] == ["look", *["act"] * n, "finish"]
    assert [d.next_tool_args["action"] for d in demos[1 : n + 1]] == [a for a, _ in example.steps]
    assert demos[0].trajectory == "" and example.steps[-1][1] in demos[-1].trajectory
    # The example's reason for a step is the demo's thought, and what is listed after it changes with the room.
    assert [d.next_thought for d in demos[1 : n + 1]] == list(example.thoughts)
    assert "; ".join(example.listed[0]) in demos[2].trajectory
    task = house.tasks("train", limit=1)[0]
    lm = DummyLM(react_script([]))
    with dspy.context(lm=lm):
        agent(task=house.describe(task), task_id=task.id)
    shown = "\n".join(str(m["content"]) for m in lm.history[0]["messages"])
    last = example.steps[-1][0]
    assert f'{{"action": "{last}"}}' in shown and example.task in shown
    with pytest.raises(ValueError, match="dspy.ReAct"):
        UserReAct(house, starter=True, react=dspy.ReActV2)


def test_without_a_look_tool_the_react_is_given_what_it_sees_and_acts(house):
    task = house.tasks("train", limit=1)[0]
    way = house.gold_path(task)
    example = house.action_example()
    agent = UserReAct(house, max_iters=len(way) + 2, starter=True, look_tool=False)
    demos = agent.react.react.demos
    assert [d.next_tool_name for d in demos] == [*["act"] * len(example.steps), "finish"]
    assert all(example.observation in d.observation for d in demos)  # the example's first room, as input
    assert set(agent.react.tools) == {"act", "finish"}
    lm = DummyLM(react_script(way))
    with dspy.context(lm=lm):
        pred = agent(task=house.describe(task), task_id=task.id)
    assert [s.content for s in pred.trajectory.steps if s.role == "agent"] == way and pred.trajectory.outcome
    first_call = str(lm.history[0]["messages"][-1]["content"])
    assert pred.trajectory.steps[0].content in first_call  # the episode's own first observation


def test_a_step_the_model_misformats_does_not_end_the_episode(house):
    task = house.tasks("train", limit=1)[0]
    way = house.gold_path(task)
    steps = react_script(way)
    # The model writes the action as the tool's name once, mid-episode: DSPy cannot parse it.
    broken = {"next_thought": "next", "next_tool_name": way[1], "next_tool_args": {}}
    script = [steps[0], broken, *steps[1:]]
    agent = UserReAct(house, max_iters=len(way) + 3, look_tool=False)
    lm = DummyLM(script, adapter=dspy.JSONAdapter())
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):  # as the bench plays: no second try by another adapter
        pred = agent(task=house.describe(task), task_id=task.id)
    assert [s.content for s in pred.trajectory.steps if s.role == "agent"] == way and pred.trajectory.outcome
    assert "stopped" not in pred.trajectory.metadata
    # The fresh call goes on from where the episode stands, with the steps it has left.
    resumed = str(lm.history[2]["messages"][-1]["content"])
    assert pred.trajectory.steps[2].content in resumed
    assert MISFORMATTED not in resumed  # it had acted since: the fresh call's inputs differ anyway
    # A fresh call's first step misformatted: called again as it was, a greedy model writes it again,
    # so the agent is told once what a step is; a second such failure ends the episode.
    agent = UserReAct(house, max_iters=10, look_tool=False)
    lm = DummyLM([broken] * 20, adapter=dspy.JSONAdapter())
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        pred = agent(task=house.describe(task), task_id=task.id)
    assert pred.answer.startswith("The agent stopped") and "AdapterParseError" in pred.trajectory.metadata["stopped"]
    asked = [str(h["messages"][-1]["content"]) for h in lm.history]
    assert [MISFORMATTED in text for text in asked] == [False, True]


def test_played_to_the_end_a_react_that_finishes_early_goes_on_until_the_environment_ends_it(house):
    task = house.tasks("train", limit=1)[0]
    way = house.gold_path(task)
    assert len(way) >= 2
    act = lambda a: {"next_thought": f"do {a}", "next_tool_name": "act", "next_tool_args": {"action": a}}  # noqa: E731
    finish = {"next_thought": "done", "next_tool_name": "finish", "next_tool_args": {}}
    answer = {"reasoning": "r", "answer": "done"}
    # It finishes after the first action; called again from there, it plays the rest.
    script = [act(way[0]), finish, answer, *[act(a) for a in way[1:]], finish, answer]
    for play_to_end, played in ((False, way[:1]), (True, way)):
        agent = UserReAct(house, max_iters=len(way) + 4, look_tool=False, play_to_end=play_to_end)
        with dspy.context(lm=DummyLM(list(script), adapter=dspy.JSONAdapter()), adapter=dspy.JSONAdapter()):
            pred = agent(task=house.describe(task), task_id=task.id)
        assert [s.content for s in pred.trajectory.steps if s.role == "agent"] == played
        assert pred.trajectory.outcome is (played == way)
    # A call that finishes without a step would finish again: the episode ends there.
    agent = UserReAct(house, max_iters=10, look_tool=False, play_to_end=True)
    lm = DummyLM([act(way[0]), finish, answer, finish, answer, act(way[1])], adapter=dspy.JSONAdapter())
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        pred = agent(task=house.describe(task), task_id=task.id)
    assert [s.content for s in pred.trajectory.steps if s.role == "agent"] == way[:1] and len(lm.history) == 5


def test_an_example_with_a_reason_or_a_listing_per_step_has_one_for_every_step():
    from rbdspy.envs.capabilities import ActionExample

    steps = (("go north", "-= Kitchen =-"), ("take jar", "Taken."))
    assert ActionExample("t", "o", ("go north",), steps, thoughts=("a", "b")).thoughts == ("a", "b")
    with pytest.raises(ValueError, match="ActionExample.thoughts has 1 entries for 2 steps"):
        ActionExample("t", "o", ("go north",), steps, thoughts=("a",))
    with pytest.raises(ValueError, match="ActionExample.listed has 3 entries for 2 steps"):
        ActionExample("t", "o", ("go north",), steps, listed=((), (), ()))
