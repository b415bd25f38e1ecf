"""Dataset records -> dspy.Examples: the inputs the modules really see, balanced subsets, globs."""

import pytest
from compile_testing import record, records

from rbdspy.envs.dataset import write_records
from rbdspy.modules.judge import render_trajectory
from rbdspy.optimizers.examples import (
    balanced_sample,
    expand_paths,
    extractor_example,
    files_digest,
    judge_example,
    load_labelled,
    make_examples,
)


def test_judge_example_inputs_are_the_judges_rendering_without_the_outcome_line():
    rec = record(0, "success")
    ex = judge_example(rec)
    assert set(ex.inputs().keys()) == {"task", "trajectory"}
    assert ex.task == rec.trajectory.task
    assert "[final answer]" not in ex.trajectory and "100/100" not in ex.trajectory
    assert ex.trajectory == render_trajectory(
        rec.trajectory.model_copy(update={"final_answer": None}), rec.trajectory.task, 6000
    )
    assert ex.label == "success" and ex.env_score == "100/100" and ex.kind == "gold"
    assert "[final answer] score 100/100" in judge_example(rec, hide_outcome=False).trajectory


def test_extractor_example_carries_the_verdict_and_the_cause():
    ex = extractor_example(record(1, "failure"))
    assert set(ex.inputs().keys()) == {"task", "trajectory", "verdict"}
    assert ex.verdict == "failure" and ex.kind == "gold_truncated"
    assert "cut after 4 of 5" in ex.cause and ex.cause_actions == ["open chest"]
    assert {"brass", "kitchen", "1"} <= set(ex.literals)
    assert "chest" not in ex.literals  # a word of the task text: the task family's vocabulary
    assert ex.verbs == ["move", "open", "take", "unlock"]  # the command verbs the episode used


def test_balanced_sample_alternates_labels_and_is_seeded():
    recs = [record(i, "success") for i in range(10)] + [record(i, "failure") for i in range(10, 13)]
    sample = balanced_sample(recs, 6, seed=1)
    assert [r.label for r in sample] == ["success", "failure"] * 3
    assert balanced_sample(recs, 6, seed=1) == sample and balanced_sample(recs, 6, seed=2) != sample
    everything = balanced_sample(recs, None)
    assert len(everything) == 13 and sum(r.label == "failure" for r in everything[:6]) == 3


def test_paths_accept_several_files_globs_and_commas(tmp_path):
    for name in ("a-train.jsonl", "b-train.jsonl", "c-dev.jsonl"):
        write_records(tmp_path / name, records(2))
    found = expand_paths([str(tmp_path / "*-train.jsonl"), f"{tmp_path / 'c-dev.jsonl'},{tmp_path / 'a-train.jsonl'}"])
    assert [p.name for p in found] == ["a-train.jsonl", "b-train.jsonl", "c-dev.jsonl"]
    assert len(load_labelled([str(tmp_path / "*.jsonl")])) == 6
    with pytest.raises(FileNotFoundError, match="no dataset file matches"):
        expand_paths([str(tmp_path / "missing-*.jsonl")])


def test_files_digest_changes_with_content(tmp_path):
    path = tmp_path / "d.jsonl"
    write_records(path, records(2))
    before = files_digest([path])
    write_records(path, records(3))
    assert files_digest([path]) != before and len(before) == 16


def test_make_examples_rejects_unknown_targets():
    with pytest.raises(ValueError, match="judge' or 'extractors"):
        make_examples("distiller", records(2))
