"""The TextWorld-Express adapter against the real simulator (one shared JVM for the session)."""

import json
import shutil

import pytest

from rbdspy.envs import TaskRef, play

# Every test here starts the simulator, which runs on the JVM (some without the shared fixture).
pytest.importorskip("textworld_express")
if shutil.which("java") is None:
    pytest.skip("Java is not installed (TextWorld-Express runs on the JVM)", allow_module_level=True)


def test_every_game_gold_path_succeeds_and_truncation_fails(twx_env):
    games = twx_env.task_types()
    assert {"cookingworld", "twc", "coin", "mapreader", "arithmetic", "sorting", "simonsays", "peckingorder"} <= set(
        games
    )
    for ref in twx_env.tasks("train", limit=len(games)):
        gold = twx_env.gold_path(ref)
        won = play(twx_env, ref, gold)
        assert won.outcome is True and won.metadata["final_score"] == 1.0, ref.id
        # Cut before the winning action (a gold path can go on after the win).
        played = won.metadata["n_steps"]
        lost = play(twx_env, ref, gold[: played - 1])
        assert lost.outcome is False, ref.id


def test_a_dropped_step_breaks_coin(twx_env):
    ref = twx_env.tasks("dev", ["coin"])[0]
    gold = twx_env.gold_path(ref)
    assert play(twx_env, ref, gold[:-1] + ["look around"]).outcome is False


def test_splits_are_disjoint_and_checked(twx_env):
    seeds = twx_env.seeds("coin")
    train, dev, test = (set(seeds[s]) for s in ("train", "dev", "test"))
    assert train and dev and test and not (train & dev) and not (train & test) and not (dev & test)
    ids = {s: {r.id for r in twx_env.tasks(s, ["coin"], limit=50)} for s in ("train", "dev", "test")}
    assert not (ids["train"] & ids["dev"]) and not (ids["train"] & ids["test"])
    with pytest.raises(ValueError, match="is a dev seed"):
        twx_env.reset(f"twx/coin/train/{min(dev)}")


def test_steps_invalid_actions_and_admissible(twx_env):
    obs = twx_env.reset(twx_env.tasks("train", ["coin"])[0])
    assert "coin" in obs.task_description and obs.admissible[0] == "look around"
    bad = twx_env.step("fly to the moon")
    assert bad.valid is False and not bad.done and bad.observation.startswith("Unknown action")
    good = twx_env.step("look around")
    assert good.valid and good.admissible


def test_game_params_are_part_of_the_task_id(twx_env):
    from rbdspy.envs.twx import TextWorldExpress

    small = {"cookingworld": "numLocations=1,numIngredients=1,numDistractorItems=0,includeDoors=0"}
    # A second adapter shares nothing with the session one but its class: construct cheaply.
    env = TextWorldExpress(games=["cookingworld"], params=small)
    try:
        ref = env.tasks("train", limit=1)[0]
        assert ref.params == small["cookingworld"] and TaskRef.parse(ref.id) == ref
        gold = env.gold_path(ref)
        assert len(gold) < len(twx_env.gold_path(f"twx/cookingworld/train/{ref.variation}"))
        assert play(env, ref, gold).outcome is True
    finally:
        env.close()
    with pytest.raises(ValueError, match="rejected params"):
        twx_env.reset("twx/coin/train/0?bogus=1")


def test_random_walk_gold_is_shortened(twx_env):
    ref = twx_env.tasks("train", ["coin"])[0]
    raw_env_gold = twx_env.gold_path(ref)
    assert play(twx_env, ref, raw_env_gold).outcome is True
    # minimal: no single step can go
    for i in range(len(raw_env_gold)):
        assert play(twx_env, ref, raw_env_gold[:i] + raw_env_gold[i + 1 :]).outcome is False


def test_gold_cache_pins_gold_paths(tmp_path):
    from rbdspy.envs.twx import TextWorldExpress

    cache = tmp_path / "gold.json"
    env = TextWorldExpress(games=["arithmetic", "coin"], gold_cache=cache)
    try:
        ref = env.tasks("dev", ["arithmetic"])[0]
        gold = env.gold_path(ref)
        assert json.loads(cache.read_text()) == {ref.id: gold}
        coin = env.tasks("dev", ["coin"])[0]
        env.gold_path(coin)
        assert f"{coin.id}#shortened" in json.loads(cache.read_text())
    finally:
        env.close()
    # A pinned path is used as is, without asking the simulator.
    cache.write_text(json.dumps({ref.id: ["look around", "pinned"]}))
    env = TextWorldExpress(games=["arithmetic"], gold_cache=cache)
    try:
        assert env.gold_path(ref) == ["look around", "pinned"]
    finally:
        env.close()
