"""The `pool` recipe: written judging strategies scored on held-out train records, the best kept,
the hand-written prompt kept on a tie, within the metric-call budget."""

import json

import dspy
import mlflow
import pytest
from compile_testing import STRICT, marker_lm, records, scripted_lm

from rbdspy.judge import ChecklistJudge, ConfidenceJudge, RationaleJudge
from rbdspy.optimizers import compile_program, load_program, new_program, recipes
from rbdspy.optimizers.examples import make_examples
from rbdspy.optimizers.instruction_pool import JUDGE_POOL
from rbdspy.optimizers.metrics import judge_score
from rbdspy.optimizers.recipes import check, plan, run_pool, with_instruction
from rbdspy.optimizers.usage import CountingMetric
from rbdspy.render import NOT_SHOWN_RULE
from rbdspy.signatures import JudgeTrajectory

# The winner sits in the middle, and a later candidate ties it: picking the first strategy, the
# last, or the last of the best would each pick another.
MARKED_POOL = {
    "lenient": "Call it a success when the agent tried. LENIENT.",
    "strict": f"Success only when an observation shows the win. {STRICT}.",
    "gloomy": "Assume the worst. GLOOMY.",
    "strict-again": f"Same idea, later in the pool. {STRICT}.",
}


def trainset(n=12):
    return make_examples("judge", records(n))  # balanced: success, failure, success, ...


def test_plan_spends_candidates_times_n_val_and_refuses_a_budget_below_two_each():
    assert plan("pool", 56, 32) == {"candidates": 7, "n_val": 8, "max_metric_calls": 56}
    assert plan("pool", 30, 32, candidates=4) == {"candidates": 4, "n_val": 7, "max_metric_calls": 28}
    assert plan("pool", 100, 5)["n_val"] == 5  # never more records than there are
    with pytest.raises(ValueError, match="at least 14 metric calls"):
        plan("pool", 13, 32)
    assert recipes.POOL_CANDIDATES == 1 + len(JUDGE_POOL) == 7


def test_the_pool_recipe_keeps_the_strategy_that_scores_best():
    student, metric = RationaleJudge(renderer=None), CountingMetric(judge_score)
    with dspy.context(lm=marker_lm()):
        compiled, knobs = run_pool(student, trainset(), metric=metric, budget=40, pool=MARKED_POOL)
    assert knobs["chosen"] == "strict" and knobs["candidates"] == 5 and knobs["n_val"] == 8
    # current (lenient without a marker) and lenient call everything success, gloomy everything failure
    assert knobs["val_scores"] == "current=0.500,lenient=0.500,strict=1.000,gloomy=0.500,strict-again=1.000"
    assert compiled.predict.signature.instructions == MARKED_POOL["strict"]
    assert student.predict.signature.instructions == JudgeTrajectory.instructions  # the student is not mutated
    assert metric.calls == knobs["max_metric_calls"] == 40  # every candidate scored on the same 8 records


def test_a_tie_keeps_the_hand_written_instruction():
    pool = {"lenient": MARKED_POOL["lenient"], "gloomy": MARKED_POOL["gloomy"]}
    with dspy.context(lm=marker_lm()):
        compiled, knobs = run_pool(RationaleJudge(renderer=None), trainset(), metric=judge_score, budget=12, pool=pool)
    assert knobs["val_scores"] == "current=0.500,lenient=0.500,gloomy=0.500" and knobs["chosen"] == "current"
    assert compiled.predict.signature.instructions == JudgeTrajectory.instructions


def test_the_written_pool_is_scored_whole_within_the_budget():
    """The shipped pool on an LM that answers the same under every instruction: all seven are
    scored, none beats the hand-written prompt, and no more metric calls than the budget."""
    metric = CountingMetric(judge_score)
    with dspy.context(lm=scripted_lm()):
        compiled, knobs = run_pool(RationaleJudge(renderer=None), trainset(), metric=metric, budget=20, pool=None)
    names = ["current", *JUDGE_POOL]
    assert [entry.split("=")[0] for entry in knobs["val_scores"].split(",")] == names
    assert knobs["chosen"] == "current" and metric.calls == 14 <= 20  # 7 candidates x n_val 2
    assert compiled.predict.signature.instructions == JudgeTrajectory.instructions


def test_the_written_strategies_are_distinct_whole_instructions():
    texts = list(JUDGE_POOL.values())
    assert 5 <= len(texts) <= 7 and len(set(texts)) == len(texts)
    for text in texts:  # each says what a doubt means, as the hand-written prompt does
        assert "unsure, the verdict is failure" in text and STRICT not in text


@pytest.mark.parametrize(
    "judge, predictor, rule",
    [
        (RationaleJudge(renderer=None), "predict", False),
        (RationaleJudge(renderer=300), "predict", True),  # reads compressed trajectories: keeps the rule
        (ChecklistJudge(), "checklist", True),
        (ConfidenceJudge(), "confident", True),
    ],
)
def test_a_strategy_goes_on_every_predictor_of_any_design(judge, predictor, rule):
    candidate = with_instruction(judge, "Judge by the last observation.")
    instructions = getattr(candidate, predictor).signature.instructions
    assert instructions.startswith("Judge by the last observation.")
    assert (NOT_SHOWN_RULE in instructions) is rule
    assert with_instruction(judge, None).dump_state() == judge.dump_state()


def test_pool_and_design_are_for_the_judge_only():
    with pytest.raises(ValueError, match="none for the extractors"):
        check("extractors", "pool")
    check("judge", "pool")
    with pytest.raises(ValueError, match="judge only"):
        new_program("extractors", design="checklist")
    assert new_program("extractors", renderer=300).renderer.budget_tokens == 300


def test_compile_with_the_pool_and_a_token_budget(data_files, tmp_path, mlflow_store, monkeypatch):
    monkeypatch.setattr(recipes, "JUDGE_POOL", MARKED_POOL)
    train, dev = data_files
    result = compile_program(
        "judge",
        "pool",
        [train],
        [dev],
        out_dir=tmp_path / "out",
        budget=20,
        lm=marker_lm(),
        design="rationale",
        renderer=300,
        log_model=False,
        display_progress=False,
    )
    assert result.before.score == 0.5 and result.after.score == 1.0
    saved = json.loads(result.path.read_text())["predict"]["signature"]["instructions"]
    assert saved == f"{MARKED_POOL['strict']}\n\n{NOT_SHOWN_RULE}"  # the renderer's rule kept
    params = mlflow.get_run(result.run_id).data.params
    assert params["design"] == "rationale" and params["renderer"] == "evidence-300"
    assert params["recipe_chosen"] == "strict" and params["recipe_val_scores"].startswith("current=0.500,")
    reloaded = load_program("judge", tmp_path / "out", design="rationale", renderer=300)
    assert reloaded.predict.signature.instructions == saved and reloaded.renderer.budget_tokens == 300
    with pytest.raises(ValueError, match="another judge design"):
        load_program("judge", tmp_path / "out", design="checklist")


def test_a_budget_too_small_is_refused_before_any_lm_call(data_files, tmp_path):
    lm = scripted_lm()
    with pytest.raises(ValueError, match="at least 14 metric calls"):
        compile_program(
            "judge", "pool", [data_files[0]], [data_files[1]], out_dir=tmp_path, budget=10, lm=lm, log_model=False
        )
    assert lm.history == []  # not even the dev evaluation before compiling
