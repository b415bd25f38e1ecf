"""A bench run's trajectories as labelled records: each distinct (task, actions) replayed in the
run's environment, labelled by it, ready for `rbdspy calibrate --judge`."""

from __future__ import annotations

import pytest
from bench_testing import quiet_bench
from typer.testing import CliRunner

from rbdspy.bench.labelled import labelled_from_run
from rbdspy.bench.records import arm_path, read_records
from rbdspy.cli import app
from rbdspy.datasets.dataset import load_records
from rbdspy.judge.trajectory_text import AGENT_FINAL_ANSWER


@pytest.fixture(scope="module")
def run(demo_env, tmp_path_factory):
    from rbdspy.memory.embedders import HashEmbedder

    out = tmp_path_factory.mktemp("bench") / "run"
    quiet_bench(demo_env, out, HashEmbedder(dim=64), "no-memory,reasoningbank", n_tasks=4, max_steps=2)
    return out


def test_each_distinct_trajectory_is_replayed_and_labelled_by_the_environment(run, demo_env):
    records, skipped = labelled_from_run(run, demo_env)
    rows = read_records(arm_path(run, "no-memory")) + read_records(arm_path(run, "reasoningbank"))
    distinct = {(r["task_id"], tuple(r["actions"])) for r in rows}
    assert len(records) == len(distinct) and skipped["duplicate"] == len(rows) - len(distinct)
    outcome = {(r["task_id"], tuple(r["actions"])): r["success"] for r in rows}
    for record in records:
        assert record.kind == "agent" and record.env == "twx" and record.trajectory.final_answer is None
        assert record.success == outcome[(record.task_id, tuple(record.actions))]
    build, _ = labelled_from_run(run, demo_env, arms=["no-memory"], phase="build")
    assert {r.split for r in build} == {"train"} and build


def test_with_the_runs_step_limit_each_ends_as_the_agent_ended_it(run, demo_env):
    records, _ = labelled_from_run(run, demo_env, max_steps=2)
    rows = {(r["task_id"], tuple(r["actions"])): r for r in read_records(arm_path(run, "no-memory"))}
    for record in records:
        row = rows.get((record.task_id, tuple(record.actions)))
        assert record.trajectory.metadata[AGENT_FINAL_ANSWER] is True  # the judge is shown it
        if row is not None and not row["success"] and row["steps"] == 2:
            assert record.trajectory.final_answer == "Stopped after 2 actions: the step limit (2) was reached."


def test_an_unknown_arm_is_named(run, demo_env):
    with pytest.raises(ValueError, match="no records of arm 'oracle'"):
        labelled_from_run(run, demo_env, arms=["oracle"])


def test_the_cli_writes_them(run, tmp_path):
    out = tmp_path / "labelled.jsonl"
    result = CliRunner().invoke(app, ["data", "from-bench", str(run), "--out", str(out), "--phase", "measure"])
    assert result.exit_code == 0, result.output
    records = load_records(out)
    assert records and all(r.split == "dev" for r in records)
    assert all(r.trajectory.final_answer.startswith("Stopped after") for r in records)
    assert f"wrote {len(records)} records" in result.output
