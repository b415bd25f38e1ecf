"""The pre-registered rule for rbdspy's default outside EnvAgent reads build records only."""

import pytest

from benchmarks.choose_default import CANDIDATES, build_tally, choose, main
from rbdspy.bench.records import append_record, arm_path


def _write(run_dir, arm, build_wins, tokens, measured_wins=0):
    for i, won in enumerate(build_wins):
        append_record(arm_path(run_dir, arm), {"index": i, "phase": "build", "success": won, "prompt_tokens": tokens})
    for j in range(3):
        append_record(
            arm_path(run_dir, arm),
            {"index": len(build_wins) + j, "phase": "measure", "success": j < measured_wins, "prompt_tokens": 1},
        )


def test_most_build_wins_is_chosen_and_measured_tasks_are_not_read(tmp_path):
    _write(tmp_path, "reasoningbank", [True, False, False], 100, measured_wins=3)
    _write(tmp_path, "trajectory-memory", [True, True, False], 500)
    _write(tmp_path, "workflow-memory", [False, False, False], 10, measured_wins=3)
    _write(tmp_path, "demo-memory", [True, False, False], 50)
    tallies = [build_tally(tmp_path, arm, 3) for arm in CANDIDATES]
    assert choose(tallies).arm == "trajectory-memory"


def test_a_tie_goes_to_fewer_prompt_tokens(tmp_path):
    _write(tmp_path, "reasoningbank", [True, True, False], 300)
    _write(tmp_path, "demo-memory", [True, False, True], 200)
    tallies = [build_tally(tmp_path, arm, 3) for arm in ("reasoningbank", "demo-memory")]
    assert choose(tallies).arm == "demo-memory"


def test_only_the_first_build_tasks_count(tmp_path):
    _write(tmp_path, "demo-memory", [False, False, True, True], 10)
    assert build_tally(tmp_path, "demo-memory", 2).wins == 0


def test_too_few_build_tasks_is_a_clear_error(tmp_path):
    _write(tmp_path, "demo-memory", [True], 10)
    with pytest.raises(ValueError, match="demo-memory: 1 of 2 build tasks"):
        build_tally(tmp_path, "demo-memory", 2)


def test_the_oracle_arm_is_printed_but_not_eligible(tmp_path, capsys):
    for arm in CANDIDATES:
        _write(tmp_path, arm, [False, False], 10)
    _write(tmp_path, "reasoningbank", [True, False], 10)
    _write(tmp_path, "demo-memory-oracle", [True, True], 1)
    main([str(tmp_path), "--build", "2"])
    out = capsys.readouterr().out
    assert "| demo-memory-oracle | 2 | 1 | not eligible |" in out
    assert "Chosen: reasoningbank" in out
