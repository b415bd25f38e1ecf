"""`rbdspy bench` threads its options to the harness and refuses bad ones; the benchmark script
runs at smoke size and prints the table with the command that reproduces it."""

import importlib.util
from pathlib import Path

import pytest
from bench_testing import scripted_lm
from typer.testing import CliRunner

import rbdspy.bench
import rbdspy.lm
from rbdspy.cli import app

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "memory_bench.py"


@pytest.fixture
def captured(monkeypatch):
    seen = {}
    monkeypatch.setattr(rbdspy.bench, "run_bench", lambda *args, **kwargs: seen.update(kwargs, args=args))
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
            "--uncompiled",
            "--lm",
            "openai/x",
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
        False,
    )
    assert captured["args"] == ("lm:openai/x", "emb:None", tmp_path) and captured["lm_name"] == "openai/x"


def test_bench_command_defaults_and_smoke(captured):
    result = CliRunner().invoke(app, ["bench", "--smoke"])
    assert result.exit_code == 0, result.output
    assert captured["smoke"] is True and captured["compiled"] is True and captured["n_tasks"] is None
    assert captured["arms"] == ["no-memory", "reasoningbank", "reasoningbank-oracle"]


@pytest.mark.parametrize(
    "argv, hint",
    [(["--arms", "magic"], "unknown arm"), (["--env", "atari"], "atari"), (["--resume"], "--resume needs --out")],
)
def test_bench_command_refuses_bad_options(captured, argv, hint):
    result = CliRunner().invoke(app, ["bench", *argv])
    assert result.exit_code != 0 and hint in result.output
    assert captured == {}


def test_memory_bench_script_smoke(demo_env, tmp_path, capsys, hash_embedder, monkeypatch):
    import rbdspy.demo

    monkeypatch.setattr(rbdspy.demo, "open_demo_env", lambda name: _Unclosed(demo_env))  # reuse the session's JVM
    spec = importlib.util.spec_from_file_location("memory_bench", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    argv = ["--smoke", "--arms", "no-memory,reasoningbank", "--out", str(tmp_path / "run"), "--no-mlflow"]
    results = module.main(argv, lm=scripted_lm(), embedder=hash_embedder)
    out = capsys.readouterr().out
    assert list(results["arms"]) == ["no-memory", "reasoningbank"]
    assert "| reasoningbank |" in out and "Reproduce: python benchmarks/memory_bench.py --smoke" in out


class _Unclosed:
    """The session environment, which the harness must not close."""

    def __init__(self, env):
        self._env = env

    def __getattr__(self, name):
        return getattr(self._env, name)

    def close(self):
        pass
