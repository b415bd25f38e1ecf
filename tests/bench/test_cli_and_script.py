"""`rbdspy bench` threads its options to the harness and refuses bad ones; the benchmark script
runs at smoke size and prints the table with the command that reproduces it."""

import pytest
from bench_testing import Unclosed, scripted_lm
from typer.testing import CliRunner

import rbdspy.bench
import rbdspy.lm
from rbdspy.cli import app


@pytest.fixture
def captured(monkeypatch):
    seen = {}
    # The command hands run_bench one BenchOptions; the stand-in keeps its fields, by name.
    monkeypatch.setattr(
        rbdspy.bench,
        "run_bench",
        lambda lm, embedder, out, options, **kwargs: seen.update(options.as_kwargs(), args=(lm, embedder, out)),
    )
    monkeypatch.setattr(rbdspy.lm, "make_lm", lambda spec: f"lm:{spec}")
    monkeypatch.setattr(rbdspy.lm, "make_embedder", lambda spec: f"emb:{spec}")
    return seen


def test_bench_command_threads_its_options(captured, tmp_path):
    result = CliRunner().invoke(
        app,
        [
            "bench",
            "--arms",
            "matts,success-only",
            "--tasks",
            "9",
            "--seed",
            "3",
            "--max-steps",
            "5",
            "--out",
            str(tmp_path),
            "--resume",
            "--lm",
            "openai/x",
            "--task-set",
            "lift",
            "--build-fraction",
            "0.2",
        ],
    )
    assert result.exit_code == 0, result.output
    assert captured["arms"] == [
        "no-memory",
        "reasoningbank",
        "matts-parallel-k3",
        "matts-sequential-k3",
        "success-only",
    ]
    assert (captured["n_tasks"], captured["seed"], captured["max_steps"], captured["resume"], captured["compiled"]) == (
        9,
        3,
        5,
        True,
        None,
    )
    assert captured["args"] == ("lm:openai/x", "emb:None", tmp_path) and captured["lm_name"] == "openai/x"
    assert (captured["task_set"], captured["build_fraction"]) == ("lift", 0.2)


def test_bench_command_defaults_and_smoke(captured):
    result = CliRunner().invoke(app, ["bench", "--smoke"])
    assert result.exit_code == 0, result.output
    assert captured["smoke"] is True and captured["compiled"] is None and captured["n_tasks"] is None
    assert captured["arms"] == ["no-memory", "reasoningbank", "reasoningbank-oracle"]
    assert (captured["task_set"], captured["build_fraction"]) == ("demo", 0.5)


@pytest.mark.parametrize(
    "argv, hint",
    [
        (["--arms", "magic"], "unknown arm"),
        (["--env", "atari"], "atari"),
        (["--resume"], "--resume needs --out"),
        (["--report-only"], "--report-only needs --out"),
        (["--recheck-truth"], "applies to --report-only only"),
        (["--compiled", "no/such/dir"], "no compiled prompts at"),
        (["--uncompiled"], "No such option"),
    ],
)
def test_bench_command_refuses_bad_options(captured, argv, hint):
    result = CliRunner().invoke(app, ["bench", *argv])
    assert result.exit_code != 0 and hint in result.output
    assert captured == {}


def test_memory_bench_script_smoke(demo_env, tmp_path, capsys, hash_embedder, monkeypatch):
    import rbdspy.envs.task_sets

    # Reuse the session's JVM.
    monkeypatch.setattr(rbdspy.envs.task_sets, "open_task_set", lambda env, task_set="demo": Unclosed(demo_env))
    from benchmarks import memory_bench as module

    argv = ["--smoke", "--arms", "no-memory,reasoningbank", "--out", str(tmp_path / "run"), "--no-mlflow"]
    results = module.main(argv, lm=scripted_lm(), embedder=hash_embedder)
    out = capsys.readouterr().out
    assert list(results["arms"]) == ["no-memory", "reasoningbank"]
    assert "| reasoningbank |" in out and "Reproduce: python -m benchmarks.memory_bench --smoke" in out


def test_bench_command_plays_real_games_and_writes_every_output(demo_env, tmp_path, monkeypatch, mlflow_store):
    """`rbdspy bench` down its real path (scripted LM, hash embedder, real TextWorld-Express games):
    every arm's records, the bank, the reports and the MLflow run are written."""
    import json

    import mlflow

    import rbdspy.envs.task_sets
    from rbdspy.bench.records import arm_path, read_records
    from rbdspy.memory import MemoryStore
    from rbdspy.memory.embedders import HashEmbedder

    specs = []
    monkeypatch.setattr(rbdspy.envs.task_sets, "open_task_set", lambda env, task_set="demo": Unclosed(demo_env))
    monkeypatch.setattr(rbdspy.lm, "make_lm", lambda spec: specs.append(spec) or scripted_lm())
    monkeypatch.setattr(rbdspy.lm, "make_embedder", lambda spec: HashEmbedder(dim=64))
    out = tmp_path / "run"
    argv = ["bench", "--smoke", "--env", "twx", "--arms", "no-memory,reasoningbank", "--tasks", "4", "--out", str(out)]
    result = CliRunner().invoke(app, [*argv, "--max-steps", "2"])
    assert result.exit_code == 0, result.output
    assert specs == [None]  # no --lm: the factory's own default

    records = {arm: read_records(arm_path(out, arm)) for arm in ("no-memory", "reasoningbank")}
    streams = [[(r["index"], r["task_id"]) for r in rows] for rows in records.values()]
    assert [i for i, _ in streams[0]] == [0, 1, 2, 3] and streams[0] == streams[1]  # the same tasks, in order
    assert all(task_id.startswith("twx/") for _, task_id in streams[0])
    assert all(r["error"] is None and r["steps"] == 2 for rows in records.values() for r in rows)
    assert [r["memories_added"] for r in records["no-memory"]] == [0, 0, 0, 0]
    assert [r["bank_size"] for r in records["reasoningbank"]] == [1, 2, 3, 4]
    with MemoryStore(out / "banks" / "reasoningbank", embedder=HashEmbedder(dim=64)) as bank:
        assert [item.title for item in bank.list()] == ["Check the room first"] * 4

    saved = json.loads((out / "results.json").read_text())
    assert list(saved["arms"]) == ["no-memory", "reasoningbank"]
    assert saved["arms"]["reasoningbank"]["memories_written"] == 4
    assert "| reasoningbank |" in (out / "results.md").read_text()
    for name in ("learning_curve.png", "success_bars.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    parent = mlflow.MlflowClient(mlflow_store).get_run(saved["mlflow_run_id"])
    assert parent.data.params["env"] == "twx" and parent.info.status == "FINISHED"


def test_the_reproduce_command_gives_back_the_run_settings(captured):
    import shlex

    from rbdspy.bench import BenchOptions
    from rbdspy.bench.report import reproduce_command
    from rbdspy.bench.settings import resolve, run_record

    config = run_record(
        resolve(
            BenchOptions(
                n_tasks=50,
                arms="lift",
                seed=3,
                max_steps=15,
                build_fraction=0.2,
                task_set="lift",
                seed_per_type=1,
                lm_name="local",
                embedder_name="local",
            )
        )
    )
    argv = shlex.split(reproduce_command(config))
    assert argv[:2] == ["rbdspy", "bench"]
    result = CliRunner().invoke(app, argv[1:])
    assert result.exit_code == 0, result.output
    played = (captured["n_tasks"], captured["arms"], captured["seed"], captured["max_steps"], captured["compiled"])
    assert played == (50, config["arms"], 3, 15, None)
    assert (captured["build_fraction"], captured["task_set"], captured["seed_per_type"]) == (0.2, "lift", 1)


def test_bench_help_lists_every_arm_set():
    from rbdspy.bench.arms import ARM_SETS

    result = CliRunner().invoke(app, ["bench", "--help"], env={"COLUMNS": "400"})
    assert result.exit_code == 0
    text = " ".join(result.output.replace("│", " ").split())
    assert all(name in text for name in ARM_SETS) and "matts-scaling" in text


def test_the_reproduce_command_of_a_house_run_names_its_world_and_agent(captured):
    import shlex

    from rbdspy.bench import BenchOptions
    from rbdspy.bench.report import reproduce_command
    from rbdspy.bench.settings import resolve, run_record

    options = BenchOptions(
        env="textworld", arms=["no-memory", "gold-exemplar"], task_set="house", world_seed=2, agent="loop"
    )
    config = run_record(resolve(options))
    argv = shlex.split(reproduce_command(config))
    result = CliRunner().invoke(app, argv[1:])
    assert result.exit_code == 0, result.output
    assert (captured["env"], captured["world_seed"], captured["agent"]) == ("textworld", 2, "loop")


def test_house_options_are_checked(captured):
    result = CliRunner().invoke(app, ["bench", "--task-set", "house", "--env", "twx"])
    assert result.exit_code == 2 and "has no twx tasks" in result.output
    result = CliRunner().invoke(app, ["bench", "--world-seed", "2"])
    assert result.exit_code == 2 and "--world-seed" in result.output
