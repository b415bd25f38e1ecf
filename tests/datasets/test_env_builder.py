"""build_dataset: labels from the environment, re-checked by replay, discards counted."""

import dspy
import pytest
from envs_testing import SequenceEnv

from rbdspy.agent import EnvAgent
from rbdspy.datasets import build_dataset, load_records
from rbdspy.datasets import builder as builder_module
from rbdspy.envs import play


def test_balanced_interleaved_and_every_record_replays(tmp_path, fake_env):
    out = tmp_path / "d.jsonl"
    report = build_dataset(fake_env, "train", 6, out, seed=1, progress=False)
    records = load_records(out)
    assert report.written == len(records) == 6
    assert report.successes == 3 and report.failures == 3
    assert [r.task_type for r in records if r.kind == "gold"] == ["box", "lamp", "box"]  # interleaved
    for record in records:
        assert record.split == "train" and record.env == "fake"
        assert play(fake_env, record.task_id, record.actions).outcome is record.success
        if record.kind != "gold":
            assert record.label == "failure" and record.cause is not None
    assert sum(report.by_kind.values()) == 6 and report.by_kind["gold"] == 3


def test_deterministic_given_the_seed(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    build_dataset(SequenceEnv(), "train", 8, a, seed=7, progress=False)
    build_dataset(SequenceEnv(), "train", 8, b, seed=7, progress=False)
    assert a.read_bytes() == b.read_bytes()


def test_harmless_perturbations_are_discarded_and_counted(tmp_path, fake_env):
    # Only swaps: in "box", swapping "take key"/"wait" or "wait"/"open door" still wins.
    report = build_dataset(
        fake_env,
        "dev",
        4,
        tmp_path / "d.jsonl",
        seed=0,
        progress=False,
        task_types=["box"],
        perturbations=["gold_step_swapped"],
        max_attempts=10,
    )
    assert report.failures >= 1
    assert report.discarded.get("perturbation_still_succeeds", 0) >= 1
    assert all(r.kind in ("gold", "gold_step_swapped") for r in load_records(tmp_path / "d.jsonl"))


def test_records_that_do_not_reproduce_are_discarded(tmp_path, fake_env, monkeypatch):
    real_replay = builder_module.replay

    def lying_replay(env, task, actions):
        trajectory = real_replay(env, task, actions)
        return trajectory.model_copy(update={"outcome": not trajectory.outcome})

    monkeypatch.setattr(builder_module, "replay", lying_replay)
    out = tmp_path / "d.jsonl"
    report = build_dataset(fake_env, "train", 4, out, seed=0, progress=False)
    assert report.written == 0 and load_records(out) == []
    # every task: its gold and at least one confirmed-failing perturbation were re-checked and thrown away
    assert report.discarded["not_reproduced"] >= 2 * report.tasks_used
    assert report.tasks_used == len(fake_env.tasks("train"))


def test_agent_rollouts_are_labelled_by_the_environment(tmp_path, fake_env):
    # The agent fails the first task (waits) and wins the second.
    answers = ["wait"] * 3 + ["take lamp", "turn on lamp", "read note"]
    dspy.configure(lm=dspy.utils.DummyLM([{"action": a} for a in answers]))
    agent = EnvAgent(fake_env, max_steps=3)
    out = tmp_path / "d.jsonl"
    report = build_dataset(fake_env, "test", 4, out, agent=agent, seed=0, progress=False, task_types=["lamp"])
    records = load_records(out)
    agent_records = [r for r in records if r.kind == "agent"]
    assert [r.label for r in agent_records] == ["failure", "success"]
    assert report.successes == report.failures == 2
    assert all(play(fake_env, r.task_id, r.actions).outcome is r.success for r in records)


def test_bad_arguments(tmp_path, fake_env):
    with pytest.raises(ValueError, match="n must be at least 1"):
        build_dataset(fake_env, "train", 0, tmp_path / "x.jsonl", progress=False)
    with pytest.raises(ValueError, match="unknown perturbation"):
        build_dataset(fake_env, "train", 2, tmp_path / "x.jsonl", progress=False, perturbations=["gold_reversed"])


def test_real_environments(tmp_path, twx_env, sw_env):
    twx = build_dataset(twx_env, "dev", 8, tmp_path / "twx.jsonl", seed=0, progress=False)
    assert twx.written == 8 and twx.successes == twx.failures == 4
    assert len({r.task_type for r in load_records(tmp_path / "twx.jsonl")}) == 4
    sw = build_dataset(
        sw_env, "train", 2, tmp_path / "sw.jsonl", seed=0, progress=False, task_types=["lifespan-longest-lived"]
    )
    assert sw.written == 2 and sw.successes == sw.failures == 1
    for record in load_records(tmp_path / "sw.jsonl"):
        assert play(sw_env, record.task_id, record.actions).outcome is record.success
