"""`rbdspy demo` on the real TextWorld-Express demo games, driven by a scripted LM: the stream
plays, the bank learns from the first task and the second one retrieves it; each step is printed
as it happens, the summary reads at 80 columns and in a file, and an agent that fails says so."""

import io
import shutil

import dspy
import pytest
from dspy.utils import DummyLM
from rich.console import Console

from rbdspy.judge.probability import lm_calls
from rbdspy.memory import MemoryStore
from rbdspy.memory.embedders import HashEmbedder
from rbdspy.types import Step, Trajectory

pytest.importorskip("textworld_express")
if shutil.which("java") is None:
    pytest.skip("Java is not installed", allow_module_level=True)

from demo_testing import Unclosed  # noqa: E402

from rbdspy.cli.demo_run import print_summary, run_demo  # noqa: E402
from rbdspy.envs.task_sets import demo_tasks, open_demo_env  # noqa: E402

JUDGE_OK = {"verdict": "success", "rationale": "won"}
JUDGE_FAIL = {"verdict": "failure", "rationale": "no coin"}


def judged(answer, actions):
    """The judge's answer once per question it asks of a trajectory of `actions` actions (the
    default judge asks several short ones; a window that shows the same steps is asked once)."""
    steps = [Step(role="env", content="start")]
    for i in range(actions):
        steps += [Step(role="agent", content=f"act {i}"), Step(role="env", content=f"seen {i}")]
    return [answer] * lm_calls(Trajectory(task="t", steps=steps))


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
    answers = [{"action": a} for a in gold] + [*judged(JUDGE_OK, steps), _lessons("Put items where they belong")]
    answers += [{"action": "look around"}] * steps + [*judged(JUDGE_FAIL, steps), _lessons("Explore before acting")]
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
    with pytest.raises(ValueError, match="unknown environment 'atari'; choose one of textworld, twx, scienceworld"):
        open_demo_env("atari")


def test_demo_with_parallel_matts_contrasts_the_rollouts(tmp_path):
    with open_demo_env("twx") as env:
        (first,) = demo_tasks(env, 1)
        gold = env.gold_path(first)
    # rollout 0 plays the gold path, rollout 1 looks around until the step limit; the selector
    # picks rollout 0 and the contrast of the two is written.
    steps = len(gold)
    answers = (
        [{"action": a} for a in gold]
        + judged(JUDGE_OK, steps)
        + [{"action": "look around"}] * steps
        + judged(JUDGE_FAIL, steps)
    )
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

    import rbdspy.cli.demo_run
    import rbdspy.lm
    from rbdspy.cli import app

    seen = {}
    monkeypatch.setattr(rbdspy.cli.demo_run, "run_demo", lambda *args, **kwargs: seen.update(kwargs))
    monkeypatch.setattr(rbdspy.lm, "make_lm", lambda spec: "lm")
    monkeypatch.setattr(rbdspy.lm, "make_embedder", lambda spec: "embedder")
    runner = CliRunner()
    result = runner.invoke(app, ["demo", "--matts", "sequential", "--k", "4", "-k", "2"])
    assert result.exit_code == 0, result.output
    assert (seen["matts"], seen["rollouts"], seen["k"]) == ("sequential", 4, 2)
    assert runner.invoke(app, ["demo", "--matts", "beam"]).exit_code != 0
    assert runner.invoke(app, ["demo", "--matts", "parallel", "--k", "0"]).exit_code != 0


def test_demo_command_plays_learns_and_keeps_the_bank(tmp_path, monkeypatch):
    """`rbdspy demo` down its real path: the command builds the LM and embedder through the
    factory (scripted here), plays two real games, and leaves a bank that a later process reads."""
    from typer.testing import CliRunner

    import rbdspy.cli.demo_run
    import rbdspy.lm
    from rbdspy.cli import app

    with open_demo_env("twx") as env:
        first, second = demo_tasks(env, 2)
        gold = env.gold_path(first)
        steps = len(gold)
        answers = [{"action": a} for a in gold] + [*judged(JUDGE_OK, steps), _lessons("Put items where they belong")]
        answers += [{"action": "look around"}] * steps + [*judged(JUDGE_FAIL, steps), _lessons("Explore before acting")]
        specs = []
        monkeypatch.setattr(rbdspy.cli.demo_run, "open_demo_env", lambda name: Unclosed(env))
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
    assert f"task 1/2 {first.split('?')[0]}" in out and f"task 2/2 {second.split('?')[0]}" in out
    assert f"→ environment: success in {steps} steps; judge: success; memories used 0, added 1" in out
    assert f"→ environment: failure in {steps} steps; judge: failure; memories used 1, added 1" in out
    assert f"step 1/{steps} {gold[0]} →" in out
    assert "used Put items where they belong added [failure] Explore before acting" in out
    assert "judge agreed with the environment on 2/2" in out
    assert f"memory list --path {bank}".replace(" ", "") in "".join(out.split())  # a long path may wrap
    with MemoryStore(bank, embedder=HashEmbedder(dim=64)) as store:
        items = sorted(store.list(), key=lambda item: item.source)
    assert [(i.source, i.title) for i in items] == [
        ("failure", "Explore before acting"),
        ("success", "Put items where they belong"),
    ]
    assert [i.use_count for i in items] == [0, 1]  # the first task's lesson was served to the second


LONG_TITLE = "Put every item where it belongs after checking the whole inventory and each container first"
SECOND_TITLE = "Explore each room in turn before acting on anything you have not seen yet"


class _Tape(io.StringIO):
    """A console's file that notes how many LM calls had been made when each piece was written."""

    def __init__(self, lm):
        super().__init__()
        self.lm, self.writes = lm, []

    def write(self, text):
        self.writes.append((len(self.lm.history), text))
        return super().write(text)


def _assert_readable(out: str, width: int, titles: list[str]) -> None:
    """No line wider than `width`, no terminal control codes, and every title whole (its words in
    order, none cut): the titles are wrapped between words only."""
    lines = out.splitlines()
    assert all(len(line) <= width for line in lines), [line for line in lines if len(line) > width]
    assert "\x1b" not in out and "\r" not in out and "━" not in out  # no colours, no progress-bar redraws
    words = " ".join(out.split())
    for title in titles:
        assert title in words
    assert not [line for line in lines if len(line.strip()) == 1 and line.strip() not in "-•"]


def test_demo_prints_each_step_as_it_happens_and_a_block_per_task_at_80_columns(tmp_path):
    with open_demo_env("twx") as env:
        first, second = demo_tasks(env, 2)
        gold = env.gold_path(first)
    steps = len(gold)
    answers = [{"action": a} for a in gold] + [*judged(JUDGE_OK, steps), _lessons(LONG_TITLE)]
    answers += [{"action": "look around"}] * steps + [*judged(JUDGE_FAIL, steps), _lessons(SECOND_TITLE)]
    lm = DummyLM(answers, adapter=dspy.JSONAdapter())
    tape = _Tape(lm)
    console = Console(width=80, file=tape, force_terminal=False)  # as when piped to a file
    run_demo(lm, HashEmbedder(dim=64), tmp_path / "bank", env="twx", n_tasks=2, max_steps=steps, console=console)
    out = tape.getvalue()

    # The first step is on screen while the first task is still being played: one LM call made
    # (its action), before the second action, the judge or the extractor were asked.
    calls, _ = next(w for w in tape.writes if f"step 1/{steps}" in w[1])
    assert calls == 1
    step_one = out.index(f"  step 1/{steps}  {gold[0]} → ")
    assert out.index(f"task 1/2  {first.split('?')[0]}") < step_one < out.index("→ environment: success")
    assert out.index("→ environment: success") < out.index("rbdspy demo: 2 task(s)")

    _assert_readable(out, 80, [LONG_TITLE, SECOND_TITLE])
    summary = out[out.index("rbdspy demo: 2 task(s)") :]
    assert f"task 1  {first.split('?')[0]}\n  environment  success\n" in summary
    assert "  judge        success (agrees with the environment)\n" in summary
    assert f"  steps        {steps}\n  used         -\n  added        [success] Put every item" in summary
    assert "  judge        failure (agrees with the environment)\n" in summary
    # a wrapped title goes on under its own column
    used = summary[summary.index("  used         Put every item") :].splitlines()
    assert used[1].startswith(" " * 15) and used[1].strip() and used[2].startswith("  added        [failure] Explore")


def test_summary_wraps_titles_by_words_at_80_and_40_columns():
    """Many titles, a failed task and a word longer than a line: wrapped between words, a long
    word cut into pieces a line long (never letter by letter), at 80 and at 40 columns."""
    long_word = "Check-the-inventory-before-every-single-action-you-take"
    rows = [
        {
            "task_id": "twx/cookingworld/train/0?numLocations=1",
            "env_success": True,
            "verdict": "success",
            "steps": 7,
            "used": [LONG_TITLE, SECOND_TITLE],
            "added": [f"[success] {LONG_TITLE}", f"[success] {long_word}"],
            "not_understood": 2,
            "lm_errors": 1,
            "error": None,
        },
        {
            "task_id": "twx/coin/train/1",
            "env_success": False,
            "verdict": "not judged",
            "steps": 0,
            "used": [],
            "added": [],
            "error": "RuntimeError: the simulator stopped answering while the agent was playing",
        },
    ]
    for width in (80, 40):
        file = io.StringIO()
        print_summary(Console(width=width, file=file, force_terminal=False), rows, "bank", 2)
        out = file.getvalue()
        _assert_readable(out, width, [LONG_TITLE, SECOND_TITLE])
        flat = " ".join(out.split())
        assert "steps 7 (2 not understood by the environment, 1 LM error)" in flat
        assert "agent failed: RuntimeError: the simulator stopped answering" in flat.replace(
            "agent failed:", "agent failed:"
        )
        assert "used • Put every item" in flat and "• Explore each room" in flat
        pieces = [line.strip(" •") for line in out.splitlines() if "Check-the" in line or "action-you" in line]
        assert pieces and all(len(piece) >= 16 for piece in pieces)  # cut in line-long pieces
    assert "The agent failed on 1/2." in flat


class _Broken(Unclosed):
    """The real environment, except that playing a step in the tasks of `broken` raises."""

    def __init__(self, env, broken):
        super().__init__(env)
        self.broken, self.current = set(broken), None

    def reset(self, ref, *args, **kwargs):
        self.current = ref if isinstance(ref, str) else ref.id
        return self._env.reset(ref, *args, **kwargs)

    def step(self, action):
        if self.current in self.broken:
            raise RuntimeError("the simulator crashed")
        return self._env.step(action)


def test_a_task_whose_agent_raised_says_so_and_the_stream_goes_on(tmp_path, monkeypatch):
    import rbdspy.cli.demo_run

    with open_demo_env("twx") as env:
        first, second = demo_tasks(env, 2)
        gold = env.gold_path(second)
        monkeypatch.setattr(rbdspy.cli.demo_run, "open_demo_env", lambda name: _Broken(env, [first]))
        steps = len(gold)
        answers = [{"action": "look around"}]  # the first task's only call: its step raises
        answers += [{"action": a} for a in gold] + [*judged(JUDGE_OK, steps), _lessons("Find the coin")]
        file = io.StringIO()
        rows = run_demo(
            DummyLM(answers, adapter=dspy.JSONAdapter()),
            HashEmbedder(dim=64),
            tmp_path / "bank",
            env="twx",
            n_tasks=2,
            max_steps=steps,
            console=Console(width=80, file=file, force_terminal=False),
        )
    out = file.getvalue()
    assert rows[0]["error"] == "RuntimeError: the simulator crashed" and rows[0]["verdict"] == "not judged"
    assert rows[0]["added"] == [] and rows[0]["env_success"] is False
    assert (
        rows[1]["error"] is None and rows[1]["env_success"] is True and rows[1]["added"] == ["[success] Find the coin"]
    )
    assert "  → agent failed: RuntimeError: the simulator crashed\n" in out  # while it plays
    block = out[out.index(f"task 1  {first.split('?')[0]}") : out.index(f"task 2  {second.split('?')[0]}")]
    assert "  agent        failed: RuntimeError: the simulator crashed\n" in block
    assert "  judge        not judged (the agent failed)\n" in block
    assert "judge agreed with the environment on 1/1. The agent failed on 1/2." in " ".join(out.split())
    with MemoryStore(tmp_path / "bank") as store:
        assert [i.title for i in store.list()] == ["Find the coin"]


def test_an_lm_that_never_answers_is_an_agent_failure_in_the_block(tmp_path):
    """EnvAgent records an LM error as a wasted step; when every step is one, the task says the
    agent failed (with the first error) rather than only "failure"."""

    class _Down:
        def __iter__(self):
            return self

        def __next__(self):
            raise RuntimeError("the provider is down")

    lm = DummyLM([], adapter=dspy.JSONAdapter())
    lm.answers = _Down()
    file = io.StringIO()
    rows = run_demo(
        lm,
        HashEmbedder(dim=64),
        tmp_path / "bank",
        env="twx",
        n_tasks=1,
        max_steps=2,
        console=Console(width=80, file=file),
    )
    out = file.getvalue()
    error = rows[0]["error"]  # DSPy wraps what the LM raised: "LMUnexpectedError: [dummy] the provider is down"
    assert error.startswith("the LM failed on all 2 steps; first: ") and error.endswith("the provider is down")
    assert rows[0]["lm_errors"] == 2 and rows[0]["verdict"] == "indeterminate" and rows[0]["added"] == []
    step_lines = [line for line in out.splitlines() if line.startswith("  step ")]
    assert len(step_lines) == 2 and all("LM error: " in line and "the provider is down" in line for line in step_lines)
    flat = " ".join(out.split())
    assert f"agent failed: {error}" in flat
    assert "steps 0 (2 LM errors)" in flat and "judge indeterminate (nothing was written)" in flat


def test_demo_command_exits_1_when_the_agent_failed_on_every_task(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    import rbdspy.cli.demo_run
    import rbdspy.lm
    from rbdspy.cli import app

    with open_demo_env("twx") as env:
        broken = demo_tasks(env, 2)
        monkeypatch.setattr(rbdspy.cli.demo_run, "open_demo_env", lambda name: _Broken(env, broken))
        monkeypatch.setattr(
            rbdspy.lm, "make_lm", lambda spec: DummyLM([{"action": "look around"}] * 2, adapter=dspy.JSONAdapter())
        )
        monkeypatch.setattr(rbdspy.lm, "make_embedder", lambda spec: HashEmbedder(dim=64))
        argv = ["demo", "--path", str(tmp_path / "bank"), "--tasks", "2", "--max-steps", "3", "--lm", "openai/x"]
        result = CliRunner().invoke(app, argv)
    assert result.exit_code == 1, result.output
    assert result.stderr.strip() == (
        "rbdspy demo: the agent failed on every task (2/2); first: RuntimeError: the simulator crashed"
    )
    assert result.stdout.count("agent        failed: RuntimeError: the simulator crashed") == 2


def test_the_demo_asks_the_lm_exactly_what_the_bank_asks_without_the_step_hook(tmp_path):
    """The live step lines only watch: the demo's LM calls (the agent's, the judge's, the
    extractor's, with the memory block retrieved) are those of the same bank and agent without a hook."""
    from rbdspy.agent import EnvAgent
    from rbdspy.loop.reasoning_bank import ReasoningBank
    from rbdspy.loop.retriever import MemoryRetriever

    with open_demo_env("twx") as env:
        first, second = demo_tasks(env, 2)
        gold = env.gold_path(first)
    steps = len(gold)
    answers = [{"action": a} for a in gold] + [*judged(JUDGE_OK, steps), _lessons("Put items where they belong")]
    answers += [{"action": "look around"}] * steps + [*judged(JUDGE_FAIL, steps), _lessons("Explore before acting")]

    demo_lm = DummyLM(list(answers), adapter=dspy.JSONAdapter())
    run_demo(
        demo_lm,
        HashEmbedder(dim=64),
        tmp_path / "demo",
        env="twx",
        n_tasks=2,
        max_steps=steps,
        console=Console(file=io.StringIO()),
    )

    plain_lm = DummyLM(list(answers), adapter=dspy.JSONAdapter())
    with (
        open_demo_env("twx") as env,
        MemoryStore(tmp_path / "plain", embedder=HashEmbedder(dim=64)) as store,
        dspy.context(lm=plain_lm, adapter=dspy.JSONAdapter()),
    ):
        agent = EnvAgent(env, max_steps=steps)
        bank = ReasoningBank(agent=agent, store=store, retriever=MemoryRetriever(store, k=1))
        for task_id in (first, second):
            bank(task=agent.describe(task_id), task_id=task_id)

    # per task: its steps, the judge's questions, the extractor
    assert len(demo_lm.history) == len(plain_lm.history) == 2 * steps + 2 * (len(judged(JUDGE_OK, steps)) + 1)
    assert [(h["messages"], h["kwargs"]) for h in demo_lm.history] == [
        (h["messages"], h["kwargs"]) for h in plain_lm.history
    ]
