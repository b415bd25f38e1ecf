"""A user's own dspy.ReAct agent gets the same memory as EnvAgent: a ReasoningBank around it
serves the typed experiences of the task's world, the environment tools show the map's next step
beside each observation, and each episode is recorded with the places it went through."""

import dspy
import pytest
from dspy.utils import DummyLM

from rbdspy.envs.base import TaskRef, world_of
from rbdspy.loop.reasoning_bank import ReasoningBank
from rbdspy.loop.retriever import MemoryRetriever
from rbdspy.maps import EnvironmentTools
from rbdspy.maps.tools import UNCHANGED
from rbdspy.memory import MemoryStore
from rbdspy.memory.embedders import HashEmbedder


class MapFollower(dspy.Module):
    """A user's ReAct agent over an environment (the example in docs/guides/environments.md)."""

    def __init__(self, env, max_iters: int = 6):
        super().__init__()
        self.env, self.max_iters = env, max_iters

    def forward(self, task, memory="", task_id=None, experience=None):
        tools = EnvironmentTools(self.env, task_id, experience)
        react = dspy.ReAct("task, memory -> answer", tools=tools.tools(), max_iters=self.max_iters)
        pred = react(task=task, memory=memory)
        return dspy.Prediction(answer=pred.answer, trajectory=tools.trajectory())

    def world(self, task_id=None, **_):
        return world_of(self.env, TaskRef.parse(task_id))


def _script(actions: list[str]) -> list[dict]:
    """ReAct turns that play `actions` then finish, and the extraction's answer."""
    turns = [{"next_thought": "go on", "next_tool_name": "act", "next_tool_args": {"action": a}} for a in actions]
    turns.append({"next_thought": "done", "next_tool_name": "finish", "next_tool_args": {}})
    return [*turns, {"reasoning": "r", "answer": "done"}]


def test_a_react_agent_is_offered_the_map_and_its_episodes_are_recorded(tmp_path):
    pytest.importorskip("textworld")
    from rbdspy.envs.textworld_env import TextWorldHouses

    env = TextWorldHouses()
    try:
        _play_two_quests(env, tmp_path)
    finally:
        env.close()


def _play_two_quests(env, tmp_path):
    # "Put the gooseberry in the fridge" (north of the start, where the mug is), then "Put the mug on ..."
    first, second = env.tasks("train", limit=3)[0], env.tasks("train", limit=3)[2]
    agent = MapFollower(env)
    with MemoryStore(tmp_path / "bank", HashEmbedder(dim=32)) as store:
        retriever = MemoryRetriever(store, k=10, min_similarity=None)
        bank = ReasoningBank(agent, store, retriever=retriever, trust_outcome=True)
        gold = env.gold_path(first)
        dspy.configure(lm=DummyLM(_script(gold) + [{"lessons": []}] * 2))
        won = bank(task=env.describe(first), task_id=first.id)
        records = [item for item in store.list() if item.experience is not None]
        assert won.trajectory.outcome is True and len(records) == 1
        assert records[0].experience.world == "textworld/1" and records[0].experience.start == "studio"
        assert [s.action for s in records[0].experience.steps] == gold
        # The next quest is served that record as data: the tool shows the way the first one learned.
        served = bank.retrieve(env.describe(second), k=10, world="textworld/1")
        tools = EnvironmentTools(env, second, [i.experience for i in served if i.experience is not None])
        shown = tools.look()
        assert "mug" in env.describe(second) and "\nMemory suggests: go north (on the way to the " in shown
        assert shown.endswith("(on the way to the canteen, for the mug)")
        assert tools.offered["suggested_why"]["learned_in"] == [env.describe(first)]  # why, for the record
        tools.act("go north")
        assert tools.trajectory().steps[1].metadata["suggested"] == "go north"
        assert "Memory suggests:" not in EnvironmentTools(env, second, []).look()  # no memory, no suggestion


def test_look_shows_the_room_the_agent_is_in_and_no_action_named_as_a_tool(tmp_path):
    """A text game admits "look"; listed beside the `look` tool, a small ReAct takes it for the tool
    and calls the tool again and again (the 1.5B in the house did for 15 steps), so the answers
    leave it out. `look` after moving shows where the agent is, not where it began, and a look
    that shows nothing new says so."""
    pytest.importorskip("textworld")
    from rbdspy.envs.textworld_env import TextWorldHouses

    env = TextWorldHouses()
    try:
        task = env.tasks("train", limit=1)[0]
        tools = EnvironmentTools(env, task)
        assert "look" in tools.admissible and "look" not in tools.listed()
        listed = tools.look().split("Admissible actions: ")[1].split("; ")
        assert "look" not in listed and set(listed) == set(tools.listed()) and "go north" in listed
        moved = tools.act("go north")
        assert tools.look() == moved and moved.split("\n")[0] != tools.steps[0].content.split("\n")[0]
        # looking again shows the same, and says that only acting changes it
        assert tools.look() == UNCHANGED + moved and tools.look() == UNCHANGED + moved
        assert tools.look().startswith(UNCHANGED) and not tools.act("go south").startswith(UNCHANGED)
        assert not tools.look().startswith(UNCHANGED)
    finally:
        env.close()
