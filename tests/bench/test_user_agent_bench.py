"""A user's own ReAct played by the bench in a TextWorld house, on a scripted LM: every arm plays
the same quests with that agent, the default bank hands it the world's map, which its tools name
with react-map (shown the starter), as does the default for a user's agent (its demos
from won episodes, its map from every episode), and the records say what memory each episode was served."""

from __future__ import annotations

import pytest

from rbdspy.bench.records import arm_path, read_records
from tests.bench.bench_testing import ANSWERS, quiet_bench
from tests.house_testing import small_house


@pytest.fixture(scope="module")
def house(tmp_path_factory):
    env = small_house(tmp_path_factory.mktemp("tw"), train=4, dev=4)
    yield env
    env.close()


def test_a_users_react_plays_every_arm_on_the_same_quests_and_the_default_hands_it_the_map(house, tmp_path):
    from rbdspy.memory.embedders import HashEmbedder

    # The ReAct walks north each turn, then finishes; the judge (scripted) calls every episode a success.
    step = {"next_thought": "go on", "next_tool_name": "act", "next_tool_args": {"action": "go north"}}
    answers = {
        **{k: v for k, v in ANSWERS.items() if "`action`" not in k},
        "fields: `next_thought`": step,
        "fields: `reasoning`, then `answer`": {"reasoning": "", "answer": "done"},
    }
    out = tmp_path / "run"
    arms = "no-memory,reasoningbank,reasoningbank-improved,demo-memory-oracle"
    quiet_bench(house, out, HashEmbedder(dim=32), arms, answers, n_tasks=4, max_steps=3, agent="react-map")
    records = {arm: read_records(arm_path(out, arm)) for arm in arms.split(",")}
    assert {tuple(r["task_id"] for r in rows) for rows in records.values()} == {
        tuple(r["task_id"] for r in records["no-memory"])
    }
    assert all(r["error"] is None and r["actions"] for rows in records.values() for r in rows)
    # The default bank records every episode of the world and hands the ReAct its map: the tools
    # name a step the past episodes agree on; the paper's configuration and no memory hand none.
    assert any(any(s for s in r["suggested"]) for r in records["reasoningbank-improved"][1:])
    # So does the default for a user's agent: its demos come from won episodes only, and every
    # episode, won or lost, is recorded for the world's map (served as suggestions, never as demos).
    assert any(any(s for s in r["suggested"]) for r in records["demo-memory-oracle"][1:])
    assert not any(any(s for s in r["suggested"]) for arm in ("no-memory", "reasoningbank") for r in records[arm])
    assert records["reasoningbank"][-1]["memories_used"] == 1  # the paper's lesson, in its memory block
