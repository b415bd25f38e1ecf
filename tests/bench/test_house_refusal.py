"""A house stream that asks its world for more quests than it holds is refused before the first
task (no record, no config.json), naming the world, what it holds and what to ask instead; the CLI
says so in one line and exits non-zero. A stream that fits is drawn from the quests the world holds."""

from __future__ import annotations

import pytest

pytest.importorskip("textworld")

from bench_testing import Unclosed, quiet_bench  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

import rbdspy.bench.settings  # noqa: E402
import rbdspy.lm  # noqa: E402
from rbdspy.bench.tasks import StreamTooLongError, build_stream  # noqa: E402
from rbdspy.cli import app  # noqa: E402
from rbdspy.envs.textworld_env import TextWorldHouses  # noqa: E402
from rbdspy.envs.textworld_house import HouseSpec  # noqa: E402

# A world of two rooms and two objects that holds three quests (one train, two dev), made in seconds.
SMALL_WORLD = 5
SMALL = HouseSpec(n_rooms=2, n_objects=2, min_walkthrough=1, max_walkthrough=1)


@pytest.fixture(scope="module")
def small_house(tmp_path_factory):
    env = TextWorldHouses(worlds=(SMALL_WORLD,), spec=SMALL, cache_dir=tmp_path_factory.mktemp("tw"))
    yield env
    env.close()


def test_a_stream_longer_than_its_world_is_refused_before_any_record(small_house, tmp_path, hash_embedder):
    out = tmp_path / "run"
    with pytest.raises(StreamTooLongError) as refused:
        quiet_bench(small_house, out, hash_embedder, "no-memory", task_set="house", n_tasks=6, max_steps=1)
    message = str(refused.value)
    assert f"world seed {SMALL_WORLD} holds 3 quests (1 train, 2 dev, 0 test)" in message
    assert "6 tasks with build fraction 0.5 (3 built on train, 3 measured on dev)" in message
    assert "at most 2 tasks (--tasks 2)" in message and "another --world-seed (1, 2" in message
    assert "\n" not in message and not out.exists()  # nothing written, not even the run's directory


def test_a_stream_that_fits_draws_only_quests_the_world_holds(small_house):
    stream = build_stream(small_house, 2, seed=0, task_types=small_house.task_types())
    assert [t.phase for t in stream] == ["build", "measure"]
    for task in stream:
        assert small_house.gold_path(task.task_id)  # generated already, won by its walkthrough


def test_the_cli_refuses_in_one_line_and_exits_non_zero(small_house, tmp_path, monkeypatch):
    monkeypatch.setattr(rbdspy.lm, "make_lm", lambda spec: f"lm:{spec}")
    monkeypatch.setattr(rbdspy.lm, "make_embedder", lambda spec: f"emb:{spec}")
    monkeypatch.setattr(rbdspy.bench.settings, "open_task_set", lambda *a, **k: Unclosed(small_house))
    out = tmp_path / "run"
    argv = ["bench", "--task-set", "house", "--world-seed", str(SMALL_WORLD), "--tasks", "6", "--out", str(out)]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 1, result.output
    [line] = result.output.strip().splitlines()
    assert line.startswith(f"rbdspy bench: world seed {SMALL_WORLD} holds 3 quests") and "--tasks 2" in line
    assert not out.exists()
