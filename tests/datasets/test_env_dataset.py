"""Labelled-trajectory JSONL: round trip and errors that name the line."""

import pytest

from rbdspy.datasets import Cause, LabelledTrajectory, load_records, write_records
from rbdspy.envs import play


def _records(env):
    ref = env.tasks("train", ["box"])[0]
    gold = env.gold_path(ref)
    ok = LabelledTrajectory(
        trajectory=play(env, ref, gold),
        label="success",
        kind="gold",
        env="fake",
        task_id=ref.id,
        task_type="box",
        split="train",
    )
    cut = LabelledTrajectory(
        trajectory=play(env, ref, gold[:2]),
        label="failure",
        kind="gold_truncated",
        cause=Cause(index=2, actions=[gold[2]], gold_length=len(gold)),
        env="fake",
        task_id=ref.id,
        task_type="box",
        split="train",
    )
    return [ok, cut]


def test_round_trip(tmp_path, fake_env):
    records = _records(fake_env)
    path = tmp_path / "sub" / "data.jsonl"
    assert write_records(path, records) == 2
    loaded = load_records(path)
    assert loaded == records
    assert loaded[1].actions == fake_env.gold_path("fake/box/train/0")[:2]
    assert "cut after 2" in loaded[1].cause.describe(loaded[1].kind)


def test_malformed_json_names_file_and_line(tmp_path, fake_env):
    path = tmp_path / "data.jsonl"
    write_records(path, _records(fake_env))
    with path.open("a") as fh:
        fh.write("\n{not json\n")
    with pytest.raises(ValueError, match=r"data\.jsonl:4: not valid JSON"):
        load_records(path)


def test_invalid_record_names_line_and_field(tmp_path, fake_env):
    good = _records(fake_env)[0]
    bad = good.model_dump(mode="json")
    bad["label"] = "maybe"
    path = tmp_path / "data.jsonl"
    import json

    path.write_text(good.model_dump_json() + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(ValueError, match=r"data\.jsonl:2: not a labelled trajectory record \(label"):
        load_records(path)


def test_records_are_internally_consistent(fake_env):
    ok, cut = _records(fake_env)
    with pytest.raises(ValueError, match="contradicts"):
        LabelledTrajectory(**{**ok.model_dump(), "label": "failure"})
    with pytest.raises(ValueError, match="needs a cause"):
        LabelledTrajectory(**{**cut.model_dump(), "cause": None})
    with pytest.raises(ValueError, match="takes no cause"):
        LabelledTrajectory(**{**ok.model_dump(), "cause": cut.cause.model_dump()})


def _labelled(task_type, label, n, split="train"):
    from rbdspy.types import Trajectory

    return LabelledTrajectory(
        trajectory=Trajectory(task=f"{task_type} task {n}", outcome=label == "success"),
        label=label,
        kind="agent",
        env="twx",
        task_id=f"twx/{task_type}/{split}/{n}",
        task_type=task_type,
        split=split,
    )


def test_seeding_sample_takes_a_win_and_a_loss_per_type_from_train_only():
    from rbdspy.datasets.dataset import seeding_sample

    records = [
        _labelled("coin", "failure", 1),
        _labelled("coin", "failure", 2),
        _labelled("coin", "success", 3),
        _labelled("coin", "success", 4),
        _labelled("twc", "success", 5),
        _labelled("mapreader", "success", 6),
    ]
    chosen = seeding_sample(records, task_types=["coin", "twc"], per_type=2)
    assert [r.task_id for r in chosen] == ["twx/coin/train/3", "twx/coin/train/1", "twx/twc/train/5"]
    assert len(seeding_sample(records, per_type=3)) == 5
    with pytest.raises(ValueError, match="train records only"):
        seeding_sample([*records, _labelled("coin", "success", 7, split="dev")])
    with pytest.raises(ValueError, match="per_type"):
        seeding_sample(records, per_type=0)
