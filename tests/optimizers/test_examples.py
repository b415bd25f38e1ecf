"""Dataset records -> dspy.Examples: the inputs the modules really see, balanced subsets, globs."""

import dspy
import pytest
from compile_testing import GOLD, record, records
from dspy.utils import DummyLM

from rbdspy.datasets.dataset import Cause, write_records
from rbdspy.judge import RationaleJudge
from rbdspy.judge.trajectory_text import render_trajectory
from rbdspy.lessons.extractor import Extractor
from rbdspy.optimizers.examples import (
    balanced_sample,
    cause_location,
    expand_paths,
    extractor_example,
    files_digest,
    judge_example,
    load_labelled,
    make_examples,
)
from rbdspy.render import EvidenceRenderer, estimate_tokens
from rbdspy.types import Step


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


# ---- examples rendered as a judge with a renderer sees them ---------------------------------


def long_record():
    """A failure whose middle is 30 looks at a room that changes by one line (the clock): legacy
    rendering cuts the middle's characters; the evidence renderer folds it, saying what it left out."""
    rec = record(3, "failure")
    middle = []
    for hour in range(30):
        room = (
            "You are in the hallway. There is a cupboard, a rug and a lamp on a small table. "
            f"The clock shows {hour} o'clock. You see a door to the north and a door to the south. Score: 0."
        )
        middle += [Step(role="agent", content="look"), Step(role="env", content=room)]
    steps = rec.trajectory.steps
    return rec.model_copy(
        update={"trajectory": rec.trajectory.model_copy(update={"steps": steps[:3] + middle + steps[3:]})}
    )


def prompt_of(program, **inputs):
    """The user message the program sends its LM (recorded by a DummyLM)."""
    lm = DummyLM({"": {"rationale": "r", "verdict": "failure", "lessons": []}})
    with dspy.context(lm=lm, adapter=dspy.ChatAdapter()):
        program(**inputs)
    return lm.history[-1]["messages"][-1]["content"]


def test_examples_rendered_with_an_evidence_renderer_are_what_that_judge_is_shown():
    rec, renderer = long_record(), EvidenceRenderer(budget_tokens=400)
    legacy, evidence = judge_example(rec), judge_example(rec, renderer=renderer)
    assert "characters of the middle omitted" in legacy.trajectory and "NOT SHOWN" not in legacy.trajectory
    assert "NOT SHOWN" in evidence.trajectory and estimate_tokens(evidence.trajectory) <= 400
    hidden = rec.trajectory.model_copy(update={"final_answer": None})  # the judge's example omits the score line
    shown = prompt_of(RationaleJudge(renderer=renderer), task=rec.trajectory.task, trajectory=hidden)
    assert evidence.trajectory in shown and legacy.trajectory not in shown
    # a token budget (int) renders the same as the renderer it stands for, for every record
    assert [e.trajectory for e in make_examples("judge", [rec], renderer=400)] == [evidence.trajectory]


def test_extractor_examples_take_the_renderer_too():
    rec = long_record()
    example = extractor_example(rec, renderer=400)
    assert example.trajectory != extractor_example(rec).trajectory
    shown = prompt_of(Extractor(renderer=400), task=rec.trajectory.task, trajectory=rec.trajectory, verdict="failure")
    assert example.trajectory in shown


# ---- where a broken gold path was broken, for the metric's feedback --------------------------


def broken(kind, actions, index, cause_actions):
    """A failure record whose agent played `actions` (each followed by one observation)."""
    steps = [Step(role="env", content="You are in the hallway.")]
    for action in actions:
        steps += [Step(role="agent", content=action), Step(role="env", content=f"Done: {action}.")]
    base = record(0, "failure")
    return base.model_copy(
        update={
            "kind": kind,
            "cause": Cause(index=index, actions=cause_actions, gold_length=len(GOLD)),
            "trajectory": base.trajectory.model_copy(update={"steps": steps}),
        }
    )


def test_cause_location_names_the_broken_step_by_its_rendered_number():
    truncated = record(1, "failure")  # GOLD without its last action
    assert cause_location(truncated) == (
        "the trajectory ends after step [7] ('unlock chest with brass key'); "
        "the next needed action, 'open chest', was never taken"
    )
    assert "[7] agent: unlock chest with brass key" in judge_example(truncated).trajectory
    dropped = broken("gold_step_dropped", GOLD[:1] + GOLD[2:], 1, [GOLD[1]])
    assert (
        cause_location(dropped)
        == "'take brass key' should have come just before step [3] ('move to kitchen') and was never taken"
    )
    swapped = broken("gold_step_swapped", [GOLD[0], GOLD[2], GOLD[1], *GOLD[3:]], 1, GOLD[1:3])
    assert cause_location(swapped).startswith(
        "steps [3] ('move to kitchen') and [5] ('take brass key') are in the wrong order"
    )
    ended = broken("gold_step_swapped", [GOLD[0], GOLD[2]], 1, GOLD[1:3])  # the episode ended on the early step
    assert (
        cause_location(ended)
        == "step [3] ('move to kitchen') came too early: 'take brass key' had to come first and never came"
    )
    # actions that do not line up with the cause: no location rather than a wrong one
    assert cause_location(broken("gold_step_swapped", GOLD, 1, GOLD[1:3])) == ""
    assert cause_location(record(0, "success")) == "" and judge_example(truncated).cause_location
