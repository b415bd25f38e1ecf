"""A small generated TextWorld house (world seed 3, four rooms) for tests that play a persistent
world, each test module opening its own with the quests it needs per split; and a user's ReAct's
turns scripted for it."""

from __future__ import annotations

from pathlib import Path

import pytest


def small_house(cache_dir: Path, **pool: int):
    """TextWorld's world 3 as a four-room house, `pool` quests per split (`train=3`); the test is
    skipped where the `envs` extra (textworld) is missing."""
    pytest.importorskip("textworld")
    from rbdspy.envs.textworld_env import TextWorldHouses
    from rbdspy.envs.textworld_house import HouseSpec

    spec = HouseSpec(n_rooms=4, n_objects=8, min_walkthrough=1, max_walkthrough=4)
    return TextWorldHouses(worlds=(3,), spec=spec, cache_dir=cache_dir, pool=pool)


def react_script(actions: list[str]) -> list[dict]:
    """A dspy.ReAct's turns on a scripted LM: each action through `act`, then `finish`, then the answer."""
    turns = [{"next_thought": f"do {a}", "next_tool_name": "act", "next_tool_args": {"action": a}} for a in actions]
    turns.append({"next_thought": "done", "next_tool_name": "finish", "next_tool_args": {}})
    return [*turns, {"reasoning": "it is done", "answer": "done"}]
