"""The memory-against-compute report: points from different runs of one stream paired on the
measured tasks they all played, costs split between build and measured tasks, and a stream
mismatch refused."""

from __future__ import annotations

import json

import pytest

from benchmarks.matts_scaling import main, read_point
from rbdspy.bench.records import append_record, arm_path

UNUSED = ("score", "steps", "lm_calls", "completion_tokens", "memories_added", "memories_used")


def write_arm(run, arm, outcomes, build=2, tokens=100, phase_of=None):
    """Records of `arm` in `run`: `build` build tasks, then one measured task per outcome."""
    for index, won in enumerate([False] * build + list(outcomes)):
        phase = "build" if index < build else "measure"
        append_record(
            arm_path(run, arm),
            {
                "index": index,
                "task_id": f"task/{index}",
                "phase": (phase_of or {}).get(index, phase),
                "success": won,
                "prompt_tokens": tokens,
                "wall_s": tokens / 10,
                **dict.fromkeys(UNUSED, 0),
            },
        )


def test_points_are_paired_on_the_measured_tasks_every_run_played(tmp_path):
    one, more = tmp_path / "stream", tmp_path / "scaled"
    write_arm(one, "demo-memory", [True, False, False, False, True], tokens=100)
    write_arm(more, "demo-build-k3", [True, True, True, False], tokens=300)  # one measured task not played yet
    result = main(
        ["--point", f"1={one}:demo-memory", "--point", f"3={more}:demo-build-k3", "--out", str(tmp_path / "o")]
    )
    first, third = result["points"]
    assert result["measured_tasks"] == 4 and result["build_tasks"] == 2
    assert (first["wins"], third["wins"]) == (1, 3)
    assert third["against_first"]["diff"] == pytest.approx(0.5)
    assert first["against_first"]["diff"] == 0
    assert (first["build_prompt_tokens"], third["build_prompt_tokens"]) == (100, 300)
    written = json.loads((tmp_path / "o" / "scaling.json").read_text())
    assert written["points"][1]["wins"] == 3 and "--point 3=" in written["command"]
    assert (tmp_path / "o" / "scaling.png").stat().st_size > 0
    assert "| 3 |" in (tmp_path / "o" / "scaling.md").read_text()


def test_runs_of_different_streams_are_refused(tmp_path):
    one, other = tmp_path / "stream", tmp_path / "other"
    write_arm(one, "demo-memory", [True, False])
    write_arm(other, "demo-build-k3", [True, False], phase_of={1: "measure"})
    with pytest.raises(SystemExit, match="task/1 is built in one run and measured in another"):
        main(["--point", f"1={one}:demo-memory", "--point", f"3={other}:demo-build-k3", "--out", str(tmp_path / "o")])


def test_a_missing_arm_or_a_malformed_point_is_named(tmp_path):
    write_arm(tmp_path / "stream", "demo-memory", [True])
    with pytest.raises(SystemExit, match="no records of arm 'demo-build-k5'"):
        main(
            [
                "--point",
                f"1={tmp_path / 'stream'}:demo-memory",
                "--point",
                f"5={tmp_path / 'stream'}:demo-build-k5",
                "--out",
                str(tmp_path / "o"),
            ]
        )
    with pytest.raises(SystemExit, match="K=RUN_DIR:ARM"):
        read_point("three=run:arm")
