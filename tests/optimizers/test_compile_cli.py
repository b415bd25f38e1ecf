"""`rbdspy compile`, `rbdspy eval`, `rbdspy ui` on scripted LMs."""

import json

import pytest
from compile_testing import STRICT, scripted_lm, scripted_reflection_lm
from rich.console import Console
from typer.testing import CliRunner

import rbdspy.lm
from rbdspy import tracking
from rbdspy.cli import app, seams
from rbdspy.cli.compile import _adapter

runner = CliRunner()


@pytest.fixture(autouse=True)
def scripted(monkeypatch, mlflow_store):
    specs = []

    def make_lm(spec=None, **kw):
        specs.append(spec)
        return {"dummy": scripted_lm, "dummy-reflect": scripted_reflection_lm}[spec]()

    monkeypatch.setattr(rbdspy.lm, "make_lm", make_lm)
    monkeypatch.setattr(seams, "console", Console(width=200))
    return specs


def invoke(*args, env=None):
    result = runner.invoke(app, [str(a) for a in args], env=env)
    return result


def on_dummy(train, dev):
    """The data and LM options every offline compile/eval call here shares."""
    return ("--train", train, "--dev", dev, "--lm", "dummy")


def test_compile_judge_with_gepa_then_eval_the_result(data_files, tmp_path, scripted):
    train, dev = data_files
    out = tmp_path / "out"
    result = invoke(
        "compile",
        "--target",
        "judge",
        "--optimizer",
        "gepa",
        "--train",
        str(train.parent / "*-train.jsonl"),
        "--dev",
        dev,
        "--budget",
        12,
        "--out",
        out,
        "--reflection-lm",
        "dummy-reflect",
        "--no-log-model",
        "--adapter",
        "chat",
        "--design",
        "rationale",
        env={"RBDSPY_LM": "dummy"},
    )  # the scripted LMs answer the rationale judge, in ChatAdapter's format
    assert result.exit_code == 0, result.output
    assert "judge with gepa: budget 12 metric calls" in result.output and f"saved {out / 'judge.json'}" in result.output
    assert "false_success_rate" in result.output and scripted == ["dummy", "dummy-reflect"]
    assert STRICT in json.loads((out / "judge.json").read_text())["predict"]["signature"]["instructions"]

    compiled = invoke(
        "eval", "--target", "judge", "--data", dev, "--compiled", out, "--lm", "dummy", "--adapter", "chat",
        "--design", "rationale",
    )  # fmt: skip
    assert compiled.exit_code == 0, compiled.output
    assert "accuracy" in compiled.output and "1.000" in compiled.output
    plain = invoke(
        "eval", "--target", "judge", "--data", dev, "--lm", "dummy", "--adapter", "chat", "--design", "rationale"
    )
    assert plain.exit_code == 0 and "uncompiled" in plain.output and "0.500" in plain.output


def test_compile_all_writes_both_files(data_files, tmp_path):
    train, dev = data_files
    out = tmp_path / "out"
    result = invoke(
        "compile",
        "--target",
        "all",
        "--optimizer",
        "bootstrap",
        "--train",
        train,
        "--dev",
        dev,
        "--budget",
        4,
        "--out",
        out,
        "--lm",
        "dummy",
        "--no-log-model",
        "--dev-limit",
        4,
    )
    assert result.exit_code == 0, result.output
    assert (out / "judge.json").is_file() and (out / "extractors.json").is_file()
    assert "dev (4 records)" in result.output


def test_bad_arguments_are_usage_errors(data_files, tmp_path):
    train, dev = data_files
    labeled = invoke(
        "compile",
        "--target",
        "extractors",
        "--optimizer",
        "labeled",
        *on_dummy(train, dev),
        "--out",
        tmp_path,
    )
    assert labeled.exit_code == 2 and "no gold lessons" in labeled.output
    missing = invoke("compile", "--train", tmp_path / "nope-*.jsonl", "--dev", dev, "--lm", "dummy", "--out", tmp_path)
    assert missing.exit_code == 2 and "no dataset file matches" in missing.output
    too_small = invoke(
        "compile",
        "--optimizer",
        "miprov2",
        "--budget",
        3,
        *on_dummy(train, dev),
        "--out",
        tmp_path,
    )
    assert too_small.exit_code == 2 and "at least" in too_small.output
    no_file = invoke("eval", "--data", dev, "--compiled", tmp_path / "none.json", "--lm", "dummy")
    assert no_file.exit_code == 2 and "no compiled judge" in no_file.output


def test_ui_starts_mlflow_on_localhost_with_the_project_store(monkeypatch):
    calls = []
    monkeypatch.setattr(tracking, "ui", lambda host="127.0.0.1", port=5000: calls.append((host, port)) or 0)
    result = invoke("ui", "--port", 5055)
    assert result.exit_code == 0 and calls == [("127.0.0.1", 5055)]
    assert tracking.tracking_uri() in result.output and "http://127.0.0.1:5055" in result.output


def test_adapter_names_map_to_dspy_adapters_and_unknown_ones_are_refused(data_files, tmp_path):
    import dspy

    train, dev = data_files
    assert isinstance(_adapter("json"), dspy.JSONAdapter) and isinstance(_adapter("chat"), dspy.ChatAdapter)
    bad = invoke(
        "compile",
        "--target",
        "judge",
        "--optimizer",
        "labeled",
        *on_dummy(train, dev),
        "--adapter",
        "xml",
    )
    assert bad.exit_code != 0 and "--adapter" in bad.output


def test_compile_the_judge_with_the_pool_for_a_design_and_a_token_budget_then_eval_it_as_compiled(
    data_files, tmp_path, mlflow_store
):
    import mlflow

    train, dev = data_files
    out = tmp_path / "out"
    view = ("--design", "checklist", "--budget-tokens", 300)
    result = invoke(
        "compile", "--optimizer", "pool", *view, *on_dummy(train, dev), "--budget", 14, "--out", out, "--no-log-model"
    )
    assert result.exit_code == 0, result.output
    assert "judge with pool: budget 14 metric calls" in result.output
    assert "checklist" in json.loads((out / "judge.json").read_text())  # the checklist design's predictor
    (run,) = mlflow.search_runs(experiment_names=["rbdspy"], output_format="list")
    params = run.data.params
    assert (params["design"], params["renderer"], params["recipe_candidates"]) == ("checklist", "evidence-300", "7")

    same = invoke("eval", "--data", dev, "--compiled", out, *view, "--lm", "dummy")
    assert same.exit_code == 0, same.output
    other = invoke("eval", "--data", dev, "--compiled", out, "--lm", "dummy")  # the default design
    assert other.exit_code == 2 and "another judge design" in other.output


@pytest.mark.parametrize(
    "args, option, says",
    [
        (("--design", "vote"), "--design", "not one of rationale, checklist"),
        (("--budget-tokens", 50), "--budget-tokens", "at least 200"),
        (("--target", "extractors", "--design", "checklist"), "--design", "judge only"),
        (("--target", "extractors", "--optimizer", "pool"), "--target/--optimizer", "none for the extractors"),
        (("--optimizer", "pool", "--budget", 10), "--train/--dev/--budget", "at least 14 metric calls"),
    ],
)
def test_bad_pool_design_and_budget_tokens_are_usage_errors_naming_the_option(data_files, tmp_path, args, option, says):
    train, dev = data_files
    result = invoke("compile", *args, *on_dummy(train, dev), "--out", tmp_path, "--no-log-model")
    flat = " ".join(result.output.replace("│", " ").split())  # the error box wraps long messages
    assert result.exit_code == 2 and option in result.output and says in flat


def test_eval_checks_design_and_budget_tokens_too(data_files):
    dev = data_files[1]
    bad = invoke("eval", "--data", dev, "--design", "vote", "--lm", "dummy")
    assert bad.exit_code == 2 and "--design" in bad.output
    small = invoke("eval", "--data", dev, "--budget-tokens", 10, "--lm", "dummy")
    assert small.exit_code == 2 and "--budget-tokens" in small.output
