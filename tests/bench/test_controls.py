"""The controls of a persistent-world stream serve what they claim: the world's own facts, the
walkthroughs of similar build quests (never the task's own), the task's own walkthrough, a block
of the same length about another world; and a bench run plays every arm task by task, recording
where it ran."""

from __future__ import annotations

import json
import os

import pytest

pytest.importorskip("textworld")

from bench_testing import ANSWERS, LESSON, quiet_bench  # noqa: E402

from rbdspy.bench.controls import (  # noqa: E402
    EXEMPLARS,
    FixedMemory,
    gold_exemplar,
    most_similar,
    oracle_facts,
    own_walkthrough,
    placebo,
    ranked_similar,
)
from rbdspy.envs.textworld_env import TextWorldHouses, world_label  # noqa: E402
from rbdspy.envs.textworld_house import HouseSpec  # noqa: E402
from rbdspy.memory.formatting import format_memory_block  # noqa: E402

SMALL = HouseSpec(n_rooms=4, n_objects=8, min_walkthrough=1, max_walkthrough=4)


@pytest.fixture(scope="module")
def house(tmp_path_factory):
    env = TextWorldHouses(
        worlds=(3,), spec=SMALL, cache_dir=tmp_path_factory.mktemp("tw"), pool={"train": 2, "dev": 3, "test": 1}
    )
    yield env
    env.close()


def test_oracle_facts_hold_the_map_and_every_object_of_the_tasks_world(house):
    facts = house.facts(3)
    items = oracle_facts(house)("textworld/3/dev/0")
    text = " ".join(item["content"] for item in items)
    assert all(world_label(3) in item["title"] for item in items)
    assert f"You start in the {facts.start}." in text
    for room in facts.rooms:
        assert f"the {room}" in text, room
    for thing in facts.place:
        assert f"the {thing} is" in text, thing
    for exits in facts.exits.values():
        for direction, to, _door in exits:
            assert f"{direction} to the {to}" in text


def test_gold_exemplar_serves_the_most_similar_build_walkthroughs_never_its_own(house):
    build = [t.id for t in house.tasks("train")]
    serve = gold_exemplar(house, build)
    for task in [t.id for t in house.tasks("dev")] + build:
        items = serve(task)
        chosen = ranked_similar(house, task, build)[:EXEMPLARS]
        assert task not in chosen and len(items) == min(EXEMPLARS, len([b for b in build if b != task]))
        assert chosen[0] == most_similar(house, task, build)
        for item, other in zip(items, chosen, strict=True):
            assert item["content"] == " | ".join(f"> {a}" for a in house.gold_path(other))
            assert house.describe(other) in item["title"]
        # Most similar first: no build quest left out shares more of the goal's entities.
        goal = set(house.quest(task).goal.entities)
        shared = [len(goal & set(house.quest(c).goal.entities)) for c in chosen]
        assert shared == sorted(shared, reverse=True)
        for other in build:
            if other != task and other not in chosen:
                assert len(goal & set(house.quest(other).goal.entities)) <= shared[-1]
    with pytest.raises(ValueError, match="needs build tasks"):
        gold_exemplar(house, [])


def test_own_walkthrough_serves_the_tasks_own_winning_actions(house):
    serve = own_walkthrough(house)
    for task in [t.id for t in house.tasks("dev")]:
        [item] = serve(task)
        assert item["content"] == " | ".join(f"> {a}" for a in house.gold_path(task))
        assert house.describe(task) in item["title"]


def test_placebo_is_as_long_as_the_oracle_block_and_about_another_world(house):
    task = "textworld/3/dev/1"
    items = placebo(house)(task)
    oracle = format_memory_block(house.oracle_items(task))
    assert abs(len(format_memory_block(items)) - len(oracle)) <= 0.02 * len(oracle)
    assert all(world_label(3) not in item["title"] for item in items)
    assert items[0]["content"] != house.oracle_items(task)[0]["content"]


def test_controls_need_an_environment_that_knows_its_world(demo_env):
    for control in (oracle_facts, placebo):
        with pytest.raises(ValueError, match="needs an environment that knows its world's facts"):
            control(demo_env)


def test_fixed_memory_hands_the_fenced_block_to_the_agent_and_writes_nothing():
    import dspy

    seen = []

    class Agent(dspy.Module):
        def forward(self, task="", memory="", task_id=None):
            seen.append(memory)
            return dspy.Prediction(answer="done")

    items = [{"title": "Map of house 9", "description": "rooms", "content": "north to the kitchen"}]
    program = FixedMemory(Agent(), lambda task_id: items, "oracle-facts")
    pred = program(task="Take the apple.", task_id="textworld/9/dev/0")
    assert seen == [format_memory_block(items)]
    assert pred.memories_added == [] and pred.verdict is None
    [hit] = pred.retrieval
    assert hit["control"] == "oracle-facts" and hit["title"] == "Map of house 9" and hit["chars"] == 20


def test_a_house_stream_plays_the_controls_task_by_task(house, tmp_path, hash_embedder, monkeypatch):
    from rbdspy.bench import player

    order = []
    play = player.ArmPlayer.play

    def spy(self, task):
        order.append((task.index, self.name))
        return play(self, task)

    monkeypatch.setattr(player.ArmPlayer, "play", spy)
    out = tmp_path / "run"
    quiet_bench(house, out, hash_embedder, "controls", task_set="house", n_tasks=4, max_steps=2)
    arms = ["no-memory", "oracle-facts", "gold-exemplar", "own-walkthrough", "placebo"]
    assert order == [(i, arm) for i in range(4) for arm in arms]
    for arm in arms:
        records = [json.loads(line) for line in (out / "arms" / f"{arm}.jsonl").read_text().splitlines()]
        assert [r["index"] for r in records] == [0, 1, 2, 3]
        assert all(r["error"] is None for r in records), records
        if arm == "no-memory":
            assert all(r["memories_used"] == 0 for r in records)
        else:
            assert all(r["memories_used"] > 0 and r["retrieved"][0]["control"] == arm for r in records)
    config = json.loads((out / "config.json").read_text())
    [session] = config["sessions"]
    assert session["cpu"] and "dspy" in session["packages"]
    assert session["cpus"] == len(os.sched_getaffinity(0))
    assert config["config"]["env"] == "textworld"


def test_lessons_written_on_a_house_stream_are_checked_for_truth(house, tmp_path, hash_embedder):
    """Each lesson a bank writes on a world that knows its facts is checked against them: a lesson
    placing a thing in its own room has one true claim, one placing it in another room one false
    claim, and a strategy states no fact (unchecked, not true). A checker that counted nothing, or
    took every claim for true, fails here."""
    # The paper's bank around an agent that reads its lessons (around the house's default agent,
    # which shows no memory block, it writes none: nobody would read them).
    facts = house.facts(3)
    thing = sorted(facts.place)[0]
    room = facts.room_of[thing]
    elsewhere = next(r for r in facts.rooms if r != room)
    right = {"title": "Fetch from the right room", "description": "When a task needs a thing."}
    wrong = {"title": "Fetch from the wrong room", "description": "When a task needs a thing."}
    lessons = [
        {**right, "content": f"The {thing} is in the {room}."},
        {**wrong, "content": f"The {thing} is in the {elsewhere}."},
        LESSON,
    ]
    out = tmp_path / "bank-run"
    results = quiet_bench(
        house,
        out,
        hash_embedder,
        "reasoningbank-read",
        answers={**ANSWERS, "fields: `lessons`": {"lessons": lessons}},
        task_set="house",
        n_tasks=2,
        max_steps=1,
    )
    records = [json.loads(line) for line in (out / "arms" / "reasoningbank-read.jsonl").read_text().splitlines()]
    assert len(records) == 2
    expected = {
        right["title"]: {"claims": 1, "true": 1},
        wrong["title"]: {"claims": 1, "true": 0},
        LESSON["title"]: {"claims": 0, "true": 0},
    }
    for record in records:
        assert len(record["written"]) == 3, record["task_id"]
        assert {w["title"]: w["truth"] for w in record["written"]} == expected, record["task_id"]
    truth = results["memory"]["reasoningbank-read"]["lesson_truth"]
    assert truth == {"items": 6, "stating_facts": 4, "all_true": 2, "claims": 4, "true_claims": 2}


def test_an_every_episode_record_states_true_places_and_its_truth_can_be_checked_again(house, tmp_path, hash_embedder):
    from rbdspy.bench.truth_recheck import recheck_truth

    out = tmp_path / "routes-run"
    quiet_bench(house, out, hash_embedder, "reasoningbank-routes", task_set="house", n_tasks=2, max_steps=2)
    path = out / "arms" / "reasoningbank-routes.jsonl"
    played = [json.loads(line) for line in path.read_text().splitlines()]
    truths = [w["truth"] for r in played for w in r["written"]]
    # Each episode's record lists the things seen where it went: claims, all true of the world.
    assert any(t["claims"] for t in truths) and all(t["true"] == t["claims"] for t in truths)
    tampered = [{**r, "written": [{**w, "truth": {"claims": 99, "true": 0}} for w in r["written"]]} for r in played]
    path.write_text("".join(json.dumps(r) + "\n" for r in tampered))
    assert recheck_truth(out, environment=house) == {"reasoningbank-routes": len(truths)}
    rechecked = [json.loads(line) for line in path.read_text().splitlines()]
    assert [w["truth"] for r in rechecked for w in r["written"]] == truths
    assert [{**r, "written": None} for r in rechecked] == [{**r, "written": None} for r in played]  # nothing else moves
    with pytest.raises(FileNotFoundError, match="no benchmark run"):
        recheck_truth(tmp_path / "nothing-here", environment=house)


def test_rbdspys_defaults_play_a_house_stream_as_the_places_bank(house, tmp_path, hash_embedder):
    """In a world that persists, the defaults (the agent's aids left to the environment, the bank's
    k, floor and action record "auto") are the places bank: the same records, task for task."""

    def normalised(value):
        if isinstance(value, dict):
            return {k: normalised(v) for k, v in value.items() if k not in ("id", "wall_s", "arm")}
        return [normalised(v) for v in value] if isinstance(value, list) else value

    out = tmp_path / "defaults-run"
    arms = "reasoningbank-improved,reasoningbank-routes"
    quiet_bench(house, out, hash_embedder, arms, task_set="house", n_tasks=3, max_steps=2)
    defaults, routes = (
        [normalised(json.loads(line)) for line in (out / "arms" / f"{arm}.jsonl").read_text().splitlines()]
        for arm in arms.split(",")
    )
    assert defaults == routes and any(r["written"] for r in defaults)
    assert json.loads((out / "config.json").read_text())["config"]["agent"] == "auto"
