"""The paired stream on the real demo games: phases, splits, interleaving, the seed."""

import pytest

from rbdspy.bench.tasks import build_stream, stream_from_dicts


def test_build_on_train_then_measure_on_dev_interleaved(demo_env):
    stream = build_stream(demo_env, 6, seed=0)
    assert [t.index for t in stream] == list(range(6))
    assert [t.phase for t in stream] == ["build"] * 3 + ["measure"] * 3
    assert all("/train/" in t.task_id for t in stream[:3]) and all("/dev/" in t.task_id for t in stream[3:])
    assert [t.task_type for t in stream] == ["twc", "coin", "cookingworld"] * 2
    assert all(t.task_id.split("/")[1] == t.task_type for t in stream)
    assert len({t.task_id for t in stream}) == 6


def test_the_seed_decides_the_variations(demo_env):
    ids = lambda seed: [t.task_id for t in build_stream(demo_env, 6, seed=seed)]  # noqa: E731
    assert ids(0) == ids(0)
    assert ids(0) != ids(1)


def test_sizes_and_options(demo_env):
    stream = build_stream(demo_env, 5, seed=0, build_fraction=0.0, measure_split="test")
    assert [t.phase for t in stream] == ["measure"] * 5 and all("/test/" in t.task_id for t in stream)
    assert stream_from_dicts([t.to_dict() for t in stream]) == stream
    with pytest.raises(ValueError, match="--tasks"):
        build_stream(demo_env, 0)
    with pytest.raises(ValueError, match="build_fraction"):
        build_stream(demo_env, 4, build_fraction=1.0)
    with pytest.raises(ValueError, match="measure_split"):
        build_stream(demo_env, 4, measure_split="train")


def test_a_fresh_stream_never_draws_a_task_an_earlier_run_played(demo_env, tmp_path):
    import json

    from rbdspy.bench.settings import tasks_of_runs

    earlier = build_stream(demo_env, 6, seed=0)
    run = tmp_path / "earlier"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"stream": [t.to_dict() for t in earlier]}))
    played = tasks_of_runs([str(run)])
    assert played == {t.task_id for t in earlier} and tasks_of_runs([str(run / "config.json")]) == played
    fresh = build_stream(demo_env, 6, seed=0, exclude=played)
    assert not {t.task_id for t in fresh} & played and len(fresh) == 6
    with pytest.raises(FileNotFoundError, match="no run there"):
        tasks_of_runs([str(tmp_path / "nowhere")])
