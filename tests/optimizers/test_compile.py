"""Compile end to end on a scripted LM: every optimizer, the saved JSON, reloading, and the
MLflow run it leaves behind."""

import json
from pathlib import Path

import dspy
import mlflow
import pytest
from compile_testing import STRICT, scripted_lm, scripted_reflection_lm

from rbdspy.optimizers import compile_program, evaluate_program, load_program
from rbdspy.optimizers.examples import load_labelled, make_examples

BUDGETS = {"gepa": 12, "miprov2": 12, "bootstrap": 4, "labeled": 0}


def run_compile(target, optimizer, data_files, out, **kw):
    """Compiles the rationale judge (the scripted LM answers its prompt), or the extractors."""
    train, dev = data_files
    kw.setdefault("log_model", False)
    if target == "judge":
        kw.setdefault("design", "rationale")
    kw.setdefault("reflection_lm", scripted_reflection_lm() if optimizer == "gepa" else None)
    return compile_program(
        target,
        optimizer,
        [train],
        [dev],
        out_dir=out,
        budget=BUDGETS[optimizer],
        lm=scripted_lm(),
        display_progress=False,
        **kw,
    )


def saved_state(path):
    return json.loads(path.read_text())


@pytest.mark.parametrize("optimizer", ["gepa", "miprov2"])
def test_instruction_optimizers_fix_the_judge(optimizer, data_files, tmp_path, mlflow_store):
    result = run_compile("judge", optimizer, data_files, tmp_path / "out")
    assert result.path == tmp_path / "out" / "judge.json"
    assert result.before.metrics["false_success_rate"] == 1.0 and result.before.score == 0.5
    assert result.after.score == 1.0 and result.after.metrics["false_success_rate"] == 0.0
    assert STRICT in saved_state(result.path)["predict"]["signature"]["instructions"]
    # The budget is the optimizer's metric calls (GEPA may finish its last iteration past it).
    slack = {"gepa": 6 + result.knobs["n_val"], "miprov2": 0}[optimizer]
    assert 0 < result.usage["metric_calls"] <= BUDGETS[optimizer] + slack


@pytest.mark.parametrize("optimizer", ["bootstrap", "labeled"])
def test_fewshot_optimizers_save_demos(optimizer, data_files, tmp_path, mlflow_store):
    result = run_compile("judge", optimizer, data_files, tmp_path / "out", max_demos=1)
    demos = saved_state(result.path)["predict"]["demos"]
    assert len(demos) == 1 and demos[0]["verdict"] in ("success", "failure")
    assert result.usage["metric_calls"] <= BUDGETS[optimizer]
    if optimizer == "bootstrap":  # a bootstrapped demo is a trace that passed the metric
        assert demos[0]["augmented"] is True and demos[0]["rationale"]


@pytest.mark.parametrize("optimizer", ["gepa", "miprov2", "bootstrap"])
def test_extractors_compile(optimizer, data_files, tmp_path, mlflow_store):
    result = run_compile("extractors", optimizer, data_files, tmp_path / "out")
    state = saved_state(tmp_path / "out" / "extractors.json")
    assert {"success", "failure"} <= set(state)
    assert result.before.metrics["part_general"] == 0.0  # the hand-written prompt copies literals here
    if optimizer in ("gepa", "miprov2"):
        assert result.after.metrics["part_general"] == 1.0 and result.after.score > result.before.score
        assert any(STRICT in state[p]["signature"]["instructions"] for p in ("success", "failure"))


def test_labeled_extractors_is_refused(data_files, tmp_path):
    with pytest.raises(ValueError, match="no gold lessons"):
        run_compile("extractors", "labeled", data_files, tmp_path / "out")


def test_the_saved_program_reloads_and_answers_the_same(data_files, tmp_path, mlflow_store):
    result = run_compile("judge", "gepa", data_files, tmp_path / "out")
    reloaded = load_program("judge", tmp_path / "out", design="rationale")  # a directory or the file itself
    assert reloaded.predict.signature.instructions == result.program.predict.signature.instructions
    assert load_program("judge", result.path, design="rationale").dump_state() == reloaded.dump_state()
    dev = make_examples("judge", load_labelled([data_files[1]]), renderer=1800)
    with dspy.context(lm=scripted_lm()):
        for example in dev:
            assert reloaded(**example.inputs()).verdict == result.program(**example.inputs()).verdict
    with pytest.raises(FileNotFoundError, match="no compiled extractors"):
        load_program("extractors", tmp_path / "out")


def test_the_bank_uses_a_compile_output_directory(data_files, tmp_path, mlflow_store, hash_embedder):
    from rbdspy import MemoryStore, ReasoningBank
    from rbdspy.judge import RationaleJudge

    run_compile("judge", "gepa", data_files, tmp_path / "out")
    agent = dspy.Predict("task, memory -> answer")
    with MemoryStore(tmp_path / "bank", embedder=hash_embedder) as store:
        rationale = {"judge": RationaleJudge()}  # the design the file was compiled for
        bank = ReasoningBank(agent, store, compiled=tmp_path / "out", **rationale)
        assert STRICT in bank.judge.predict.signature.instructions
        assert bank.compiled_from == [str(tmp_path / "out" / "judge.json")]
        plain = ReasoningBank(agent, store, compiled=None, judge=RationaleJudge())
        assert STRICT not in plain.judge.predict.signature.instructions
        plain.load(tmp_path / "out")
        assert STRICT in plain.judge.predict.signature.instructions


def test_one_mlflow_run_per_compile_with_params_metrics_and_artifacts(data_files, tmp_path, mlflow_store):
    result = run_compile("judge", "gepa", data_files, tmp_path / "out", log_model=True)
    mlflow.set_tracking_uri(mlflow_store)
    run = mlflow.get_run(result.run_id)
    params, metrics = run.data.params, run.data.metrics
    assert params["target"] == "judge" and params["optimizer"] == "gepa" and params["budget_metric_calls"] == "12"
    assert (
        params["lm"] == "dummy" and len(params["train_sha256"]) == 16 and params["train_sha256"] != params["dev_sha256"]
    )
    assert params["recipe_max_metric_calls"] == "12" and params["n_dev"] == "6"
    assert metrics["dev_before_accuracy"] == 0.5 and metrics["dev_after_accuracy"] == 1.0
    assert metrics["dev_before_false_success_rate"] == 1.0 and metrics["dev_after_balanced_accuracy"] == 1.0
    assert metrics["dev_gain"] == 0.5 and metrics["wall_seconds"] > 0
    assert metrics["lm_calls"] >= 12 + 6 + 6 and metrics["lm_prompt_tokens"] > 0 and metrics["metric_calls"] >= 12
    client = mlflow.MlflowClient()
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id, "compiled")} | {
        a.path for a in client.list_artifacts(run.info.run_id, "eval")
    }
    assert {
        "compiled/judge.json",
        "eval/dev_before_confusion.png",
        "eval/dev_after_confusion.png",
        "eval/dev_after_results.jsonl",
    } <= artifacts
    local = mlflow.artifacts.download_artifacts(
        run_id=run.info.run_id, artifact_path="compiled/judge.json", dst_path=str(tmp_path / "dl")
    )
    assert json.loads(Path(local).read_text()) == saved_state(result.path)
    png = mlflow.artifacts.download_artifacts(
        run_id=run.info.run_id, artifact_path="eval/dev_after_confusion.png", dst_path=str(tmp_path / "dl")
    )
    assert Path(png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The DSPy flavour round-trips the compiled instructions.
    (model,) = mlflow.search_logged_models(experiment_ids=[run.info.experiment_id], output_format="list")
    assert model.source_run_id == run.info.run_id
    loaded = mlflow.dspy.load_model(model.model_uri)
    mlflow.clear_active_model()  # loading made it MLflow's active model, for this process's later runs
    assert loaded.predict.signature.instructions == result.program.predict.signature.instructions


def test_evaluate_program_logs_an_eval_run(data_files, tmp_path, mlflow_store):
    report, run_id = evaluate_program("judge", [data_files[1]], lm=scripted_lm(), display_progress=False)
    assert report.metrics["accuracy"] == 0.5 and report.confusion["failure"]["success"] == 3
    mlflow.set_tracking_uri(mlflow_store)
    run = mlflow.get_run(run_id)
    assert run.data.params["compiled"] == "none" and run.data.metrics["eval_false_success_rate"] == 1.0
    assert "eval/eval_confusion.png" in {a.path for a in mlflow.MlflowClient().list_artifacts(run_id, "eval")}
    extractor_report, _ = evaluate_program("extractors", [data_files[1]], lm=scripted_lm(), display_progress=False)
    assert extractor_report.metrics["part_general"] == 0.0 and "part_cause" in extractor_report.metrics


def test_compile_without_an_lm_says_so(data_files, tmp_path):
    with pytest.raises(ValueError, match="needs an LM"):
        compile_program("judge", "gepa", [data_files[0]], [data_files[1]], out_dir=tmp_path)


def test_the_first_eval_of_a_process_records_its_traces(data_files, tmp_path, mlflow_store, monkeypatch):
    """Autologging is switched on by the run; the LM context must come after it, or DSPy's
    context keeps the callbacks of before and the eval's calls are not traced."""
    monkeypatch.setenv("RBDSPY_MLFLOW_AUTOLOG", "1")
    try:
        _, run_id = evaluate_program("judge", [data_files[1]], lm=scripted_lm(), display_progress=False)
        mlflow.set_tracking_uri(mlflow_store)
        experiment = mlflow.get_run(run_id).info.experiment_id
        assert len(mlflow.search_traces(locations=[experiment], return_type="list")) > 0
    finally:
        mlflow.dspy.autolog(disable=True, silent=True)
        dspy.settings.configure(callbacks=[])


def test_labeled_probability_judge_saves_each_question_its_demos_and_reloads(data_files, tmp_path, mlflow_store):
    result = run_compile("judge", "labeled", data_files, tmp_path / "out", design="probability", max_demos=2)
    state = saved_state(result.path)
    steps_demos, action_demos = state["last_steps_verdict"]["demos"], state["actions_verdict"]["demos"]
    assert len(steps_demos) == 2 and all(
        d["last_steps"] and d["verdict"] in ("success", "failure") for d in steps_demos
    )
    assert all("trajectory" not in d for d in steps_demos + action_demos)  # the question's fields only
    judge = load_program("judge", result.path, design="probability")
    assert [d["last_steps"] for d in judge.last_steps_verdict.demos] == [d["last_steps"] for d in steps_demos]
