"""Named task sets: each opens the games it names with their parameters, and the lift set's coin
games really have four rooms behind doors (the gold path opens a door) and are winnable."""

import shutil

import pytest

from rbdspy.envs import play
from rbdspy.envs.task_sets import TASK_SETS, env_for_task_set, open_task_set, task_set_types


def test_an_unknown_task_set_is_named():
    sets = "demo, lift, house, house-shuffled, house-starts, house-starts-shuffled"
    with pytest.raises(ValueError, match=f"unknown task set 'huge'.*{sets}"):
        open_task_set("twx", "huge")


def test_every_task_set_names_its_environments():
    for name in ("demo", "lift"):
        spec = TASK_SETS[name]
        assert spec["twx"] and spec["scienceworld"], name
        assert task_set_types("twx", name) == list(spec["twx"].task_types) == spec["twx"].options["games"]
    for name in ("house", "house-shuffled", "house-starts", "house-starts-shuffled"):
        assert env_for_task_set(name) == "textworld" and "textworld" in TASK_SETS[name]
    assert task_set_types("textworld", "house") == task_set_types("textworld", "house-starts") == ["1"]
    assert task_set_types("textworld", "house-shuffled") == ["shuffled"]
    assert task_set_types("textworld", "house-starts-shuffled") == ["shuffled"]


def test_the_house_starts_sets_open_the_world_with_quests_starting_in_rooms_of_their_own(tmp_path, monkeypatch):
    pytest.importorskip("textworld")
    monkeypatch.setenv("RBDSPY_TEXTWORLD_CACHE", str(tmp_path))  # opening lists tasks only: nothing generated
    starts = open_task_set("textworld", "house-starts", world_seed=4)
    control = open_task_set("textworld", "house-starts-shuffled")
    try:
        assert starts.task_types() == ["4"] and starts.starts and not starts.shuffled
        assert control.task_types() == ["shuffled"] and control.starts and control.shuffled
        [ref] = starts.tasks("dev", limit=1)
        assert ref.id == "textworld/4/dev/0?start=cycle" and starts.world_of(ref) == "textworld/4"
    finally:
        starts.close()
        control.close()


def test_a_task_set_played_in_the_wrong_environment_is_named():
    assert env_for_task_set("demo") == "twx"
    with pytest.raises(ValueError, match="task set 'house' has no twx tasks; twx plays demo, lift"):
        env_for_task_set("house", "twx")
    with pytest.raises(ValueError, match="unknown environment 'atari'"):
        env_for_task_set("demo", "atari")


def test_the_lift_coin_games_have_doors_and_are_winnable():
    pytest.importorskip("textworld_express")
    if shutil.which("java") is None:
        pytest.skip("Java is not installed (TextWorld-Express runs on the JVM)")
    env = open_task_set("twx", "lift")
    try:
        [ref] = env.tasks("dev", ["coin"], limit=1)
        assert "numLocations=4" in ref.id and "includeDoors=1" in ref.id
        gold = env.gold_path(ref)
        assert any(step.startswith("open ") for step in gold), gold
        assert play(env, ref, gold).outcome is True
    finally:
        env.close()
