"""TaskRef ids, task listing and `play` on the pure-Python environment."""

import pytest
from envs_testing import SequenceEnv

from rbdspy.envs import Environment, TaskRef, actions_of, make_env, play


def test_task_id_round_trips():
    ref = TaskRef(env="scienceworld", task_type="boil", split="train", variation=3)
    assert ref.id == "scienceworld/boil/train/3" == str(ref)
    assert TaskRef.parse(ref.id) == ref
    with_params = TaskRef(
        env="twx", task_type="cookingworld", split="dev", variation=10003, params="numLocations=3,includeDoors=0"
    )
    assert with_params.id == "twx/cookingworld/dev/10003?numLocations=3,includeDoors=0"
    assert TaskRef.parse(with_params.id) == with_params


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("boil", "must look like"),
        ("sw/boil/holdout/3", "split 'holdout'"),
        ("sw/boil/train/x", "variation 'x'"),
        ("", "non-empty"),
    ],
)
def test_bad_task_ids_name_the_problem(bad, message):
    with pytest.raises(ValueError, match=message):
        TaskRef.parse(bad)


def test_tasks_interleave_types_and_respect_limit(fake_env):
    refs = fake_env.tasks("train", limit=3)
    assert [r.task_type for r in refs] == ["box", "lamp", "box"]
    assert all(r.split == "train" for r in refs)
    with pytest.raises(ValueError, match="unknown task type"):
        fake_env.tasks("train", ["nope"])
    with pytest.raises(ValueError, match="split must be one of"):
        fake_env.tasks("validation")


def test_reset_refuses_a_task_of_another_environment(fake_env):
    with pytest.raises(ValueError, match="belongs to environment 'scienceworld'"):
        fake_env.reset("scienceworld/boil/train/0")


def test_play_builds_a_ground_truth_trajectory(fake_env):
    assert isinstance(fake_env, Environment)
    ref = fake_env.tasks("train", ["lamp"])[0]
    traj = play(fake_env, ref, fake_env.gold_path(ref) + ["wait"])
    assert traj.outcome is True
    assert traj.task == fake_env.describe(ref)
    assert [s.role for s in traj.steps[:3]] == ["env", "agent", "env"]
    # play stops at done: the trailing "wait" after the win is not played
    assert actions_of(traj) == fake_env.gold_path(ref)
    meta = traj.metadata
    assert (
        meta["env"] == "fake" and meta["task_id"] == ref.id and meta["task_type"] == "lamp" and meta["split"] == "train"
    )
    assert meta["final_score"] == 1.0 and meta["n_steps"] == 4

    failed = play(fake_env, ref.id, fake_env.gold_path(ref)[:-1])
    assert failed.outcome is False and failed.metadata["n_steps"] == 3


def test_adapters_are_shared_not_copied(fake_env):
    import copy

    assert copy.deepcopy(fake_env) is fake_env and copy.copy(fake_env) is fake_env


def test_make_env_rejects_unknown_names():
    with pytest.raises(ValueError, match="unknown environment 'alfworld'"):
        make_env("alfworld")


def test_context_manager_closes():
    with SequenceEnv() as env:
        pass
    assert env.closed
