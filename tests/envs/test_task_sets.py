"""Named task sets: each opens the games it names with their parameters, and the lift set's coin
games really have four rooms behind doors (the gold path opens a door) and are winnable."""

import shutil

import pytest

from rbdspy.envs import play
from rbdspy.envs.task_sets import TASK_SETS, env_for_task_set, open_task_set, task_set_types


def test_an_unknown_task_set_is_named():
    with pytest.raises(ValueError, match="unknown task set 'huge'.*demo, lift, house, house-shuffled"):
        open_task_set("twx", "huge")


def test_every_task_set_names_its_environments():
    for name in ("demo", "lift"):
        spec = TASK_SETS[name]
        assert spec["twx"] and spec["scienceworld"], name
        assert task_set_types("twx", name) == list(spec["twx"])
    for name in ("house", "house-shuffled"):
        assert env_for_task_set(name) == "textworld"
        assert list(TASK_SETS[name]) == ["textworld"]
    assert task_set_types("textworld", "house") == ["1"]
    assert task_set_types("textworld", "house-shuffled") == ["shuffled"]


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
