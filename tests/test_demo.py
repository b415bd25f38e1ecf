"""`rbdspy demo` on the real TextWorld-Express demo games, driven by a scripted LM: the stream
plays, the bank learns from the first task and the second one retrieves it."""

import shutil

import dspy
import pytest
from dspy.utils import DummyLM
from rich.console import Console

from rbdspy.memory import MemoryStore
from rbdspy.memory.embedders import HashEmbedder

pytest.importorskip("textworld_express")
if shutil.which("java") is None:
    pytest.skip("Java is not installed", allow_module_level=True)

from rbdspy.demo import demo_tasks, open_demo_env, run_demo  # noqa: E402

JUDGE_OK = {"verdict": "success", "rationale": "won"}
JUDGE_FAIL = {"verdict": "failure", "rationale": "no coin"}


def _lessons(title):
    return {
        "lessons": [
            {"title": title, "description": f"When {title.lower()} applies.", "content": f"Apply {title.lower()}."}
        ]
    }


def test_demo_tasks_interleave_the_games():
    with open_demo_env("twx") as env:
        ids = demo_tasks(env, 4)
    assert [i.split("/")[1] for i in ids] == ["twc", "coin", "cookingworld", "twc"]
    assert len(set(ids)) == 4 and all("/train/" in i for i in ids)


def test_demo_plays_learns_and_retrieves(tmp_path):
    with open_demo_env("twx") as env:
        first, second = demo_tasks(env, 2)
        gold = env.gold_path(first)
    # task 1 (twc) plays its gold path and is judged a success; task 2 (coin) spends its whole
    # step budget looking around.
    steps = len(gold)
    answers = [{"action": a} for a in gold] + [JUDGE_OK, _lessons("Put items where they belong")]
    answers += [{"action": "look around"}] * steps + [JUDGE_FAIL, _lessons("Explore before acting")]
    lm = DummyLM(answers, adapter=dspy.JSONAdapter())
    console = Console(record=True, width=200)
    rows = run_demo(
        lm, HashEmbedder(dim=64), tmp_path / "bank", env="twx", n_tasks=2, k=1, max_steps=steps, console=console
    )

    assert [r["task_id"] for r in rows] == [first, second]
    assert rows[0]["env_success"] is True and rows[0]["verdict"] == "success" and rows[0]["used"] == []
    assert rows[0]["added"] == ["[success] Put items where they belong"]
    assert rows[1]["env_success"] is False and rows[1]["verdict"] == "failure"
    assert rows[1]["used"] == ["Put items where they belong"]  # the first task's lesson was retrieved
    out = console.export_text()
    assert "judge agreed with the environment on 2/2" in out and "rbdspy memory list --path" in out
    with MemoryStore(tmp_path / "bank") as store:
        assert sorted(i.source for i in store.list()) == ["failure", "success"]


def test_demo_rejects_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="--tasks"):
        run_demo(DummyLM([]), HashEmbedder(dim=64), tmp_path / "b", n_tasks=0)
    with pytest.raises(ValueError, match="unknown demo environment"):
        open_demo_env("atari")


def test_demo_with_parallel_matts_contrasts_the_rollouts(tmp_path):
    with open_demo_env("twx") as env:
        (first,) = demo_tasks(env, 1)
        gold = env.gold_path(first)
    # rollout 0 plays the gold path, rollout 1 looks around until the step limit; the selector
    # picks rollout 0 and the contrast of the two is written.
    steps = len(gold)
    answers = [{"action": a} for a in gold] + [JUDGE_OK] + [{"action": "look around"}] * steps + [JUDGE_FAIL]
    answers += [
        {"rationale": "attempt 0 put the item away", "best_index": 0},
        _lessons("Finish the goal before exploring"),
    ]
    lm = DummyLM(answers, adapter=dspy.JSONAdapter())
    console = Console(record=True, width=200)
    rows = run_demo(
        lm,
        HashEmbedder(dim=64),
        tmp_path / "bank",
        env="twx",
        n_tasks=1,
        max_steps=steps,
        console=console,
        matts="parallel",
        rollouts=2,
    )

    assert rows[0]["rollout_success"] == [True, False] and rows[0]["chosen"] == 0
    assert rows[0]["env_success"] is True and rows[0]["verdict"] == "success"
    assert rows[0]["added"] == ["[contrast] Finish the goal before exploring"]
    assert "rollouts succeeded in the environment 1/2, answered with rollout 0" in console.export_text()
    with pytest.raises(ValueError, match="--matts"):
        run_demo(lm, HashEmbedder(dim=64), tmp_path / "b2", matts="beam")


def test_demo_command_threads_matts_options(monkeypatch):
    from typer.testing import CliRunner

    import rbdspy.demo
    import rbdspy.lm
    from rbdspy.cli import app

    seen = {}
    monkeypatch.setattr(rbdspy.demo, "run_demo", lambda *args, **kwargs: seen.update(kwargs))
    monkeypatch.setattr(rbdspy.lm, "make_lm", lambda spec: "lm")
    monkeypatch.setattr(rbdspy.lm, "make_embedder", lambda spec: "embedder")
    runner = CliRunner()
    result = runner.invoke(app, ["demo", "--matts", "sequential", "--k", "4", "-k", "2"])
    assert result.exit_code == 0, result.output
    assert (seen["matts"], seen["rollouts"], seen["k"]) == ("sequential", 4, 2)
    assert runner.invoke(app, ["demo", "--matts", "beam"]).exit_code != 0
    assert runner.invoke(app, ["demo", "--matts", "parallel", "--k", "0"]).exit_code != 0


class _Unclosed:
    """An environment the command must not close (the test closes it)."""

    def __init__(self, env):
        self._env = env

    def __getattr__(self, name):
        return getattr(self._env, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass


def test_demo_command_plays_learns_and_keeps_the_bank(tmp_path, monkeypatch):
    """`rbdspy demo` down its real path: the command builds the LM and embedder through the
    factory (scripted here), plays two real games, and leaves a bank that a later process reads."""
    from typer.testing import CliRunner

    import rbdspy.demo
    import rbdspy.lm
    from rbdspy.cli import app

    with open_demo_env("twx") as env:
        first, second = demo_tasks(env, 2)
        gold = env.gold_path(first)
        steps = len(gold)
        answers = [{"action": a} for a in gold] + [JUDGE_OK, _lessons("Put items where they belong")]
        answers += [{"action": "look around"}] * steps + [JUDGE_FAIL, _lessons("Explore before acting")]
        specs = []
        monkeypatch.setattr(rbdspy.demo, "open_demo_env", lambda name: _Unclosed(env))
        monkeypatch.setattr(
            rbdspy.lm, "make_lm", lambda spec: specs.append(spec) or DummyLM(answers, adapter=dspy.JSONAdapter())
        )
        monkeypatch.setattr(rbdspy.lm, "make_embedder", lambda spec: HashEmbedder(dim=64))
        bank = tmp_path / "bank"
        argv = ["demo", "--path", str(bank), "--env", "twx", "--tasks", "2", "--max-steps", str(steps)]
        result = CliRunner().invoke(app, [*argv, "--lm", "openai/unused"])
    assert result.exit_code == 0, result.output
    assert specs == ["openai/unused"]
    out = " ".join(result.output.split())
    assert f"{first.split('?')[0]}: environment says success in {steps} steps, judge says success" in out
    assert f"{second.split('?')[0]}: environment says failure in {steps} steps, judge says failure; used 1" in out
    assert "judge agreed with the environment on 2/2" in out
    assert f"memory list --path {bank}".replace(" ", "") in "".join(out.split())  # a long path may wrap
    with MemoryStore(bank, embedder=HashEmbedder(dim=64)) as store:
        items = sorted(store.list(), key=lambda item: item.source)
    assert [(i.source, i.title) for i in items] == [
        ("failure", "Explore before acting"),
        ("success", "Put items where they belong"),
    ]
    assert [i.use_count for i in items] == [0, 1]  # the first task's lesson was served to the second
