"""TaskRef ids, task listing and `play` on the pure-Python environment."""

import pytest

from rbdspy.envs import Environment, TaskRef, actions_of, make_env, play
from rbdspy.envs.base import EnvironmentBase, interleave


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


class _CountingEnv(EnvironmentBase):
    """EnvironmentBase with nothing of its own but a close() that counts."""

    name = "counting"

    def __init__(self):
        self.closes = 0

    def task_types(self):
        return ["box"]

    def close(self):
        self.closes += 1


def test_context_manager_yields_the_adapter_and_closes_it_once_even_on_error():
    env = _CountingEnv()
    with env as entered:
        assert entered is env and env.closes == 0
    assert env.closes == 1
    failing = _CountingEnv()
    with pytest.raises(RuntimeError, match="mid-episode"), failing:
        raise RuntimeError("mid-episode")  # not swallowed by __exit__
    assert failing.closes == 1


def test_base_checks_task_ids_splits_and_types():
    env = _CountingEnv()
    ref = env._task("counting/box/dev/4")
    assert ref == TaskRef(env="counting", task_type="box", split="dev", variation=4)
    assert env._task(ref) is ref
    with pytest.raises(ValueError, match="belongs to environment 'fake', not 'counting'"):
        env._task("fake/box/dev/4")
    with pytest.raises(ValueError, match="unknown task type 'lamp'; known: box"):
        env._task("counting/lamp/dev/4")
    assert env._check_types(None) == ["box"] and env._check_types(["box"]) == ["box"]
    with pytest.raises(ValueError, match=r"unknown task type\(s\) \['lamp'\] for counting"):
        env._check_types(["box", "lamp"])
    with pytest.raises(ValueError, match="split must be one of train, dev, test; got 'val'"):
        env._check_split("val")


def test_interleave_round_robins_over_types_up_to_the_limit():
    def refs(task_type, n):
        return [TaskRef(env="e", task_type=task_type, split="train", variation=v) for v in range(n)]

    groups = [refs("a", 3), refs("b", 1), refs("c", 2)]
    assert [(r.task_type, r.variation) for r in interleave(groups)] == [
        ("a", 0),
        ("b", 0),
        ("c", 0),
        ("a", 1),
        ("c", 1),
        ("a", 2),
    ]
    assert [(r.task_type, r.variation) for r in interleave(groups, limit=4)] == [("a", 0), ("b", 0), ("c", 0), ("a", 1)]


def test_an_environment_names_no_persistent_world_unless_it_has_one():
    from rbdspy.envs.base import trajectory_metadata, world_of

    env = _CountingEnv()
    ref = TaskRef.parse("counting/a/dev/0")
    assert not hasattr(env, "world_of")  # the base class defines no optional hook
    assert world_of(env, ref) is None and world_of(object(), ref) is None
    env.score = 0.0
    assert "world" not in trajectory_metadata(env, ref, 0)


def test_each_adapter_states_how_its_actions_and_tasks_are_worded():
    from rbdspy.envs.base import ActionLanguage
    from rbdspy.envs.scienceworld import ScienceWorld
    from rbdspy.envs.textworld_compass import TEXTWORLD_LANGUAGE
    from rbdspy.envs.textworld_env import TextWorldHouses
    from rbdspy.envs.twx import TextWorldExpress

    family = ActionLanguage(
        plain_verbs=frozenset({"go", "put", "take"}),
        imperative_tasks=True,
        verb_forms={"put": ("put", "insert", "place")},
        looks=("look", "examine ", "inventory", "task"),
    )
    assert TextWorldHouses.language is TEXTWORLD_LANGUAGE and TextWorldExpress.language is TEXTWORLD_LANGUAGE
    assert TextWorldHouses.language == family
    # ScienceWorld's tasks are not imperatives ("Your task is to find a(n) animal..."): only which of
    # its actions only look is known.
    assert ScienceWorld.language == ActionLanguage(looks=ScienceWorld.language.looks)
    assert EnvironmentBase.language == ActionLanguage() and "look around" in ScienceWorld.language.looks
    assert not ScienceWorld.language.imperative_tasks and not ScienceWorld.language.plain_verbs
