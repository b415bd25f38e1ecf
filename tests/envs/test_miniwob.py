"""The web adapter on real MiniWoB++ pages in headless Chromium (Debian's `chromium` and
`chromium-driver`, which CI installs): a reset gives the utterance and the page's elements, the
page's timer is lifted and the raw reward read, the right action wins, a wrong one is rejected
with why, `fill` types and `select` chooses, the held-out types are refused, a missing browser is
one line naming the packages, two workers have a browser each, and the browser dies with its
process, even by SIGKILL."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

miniwob = pytest.importorskip("miniwob", reason="the web adapter needs the `envs` extra (miniwob)")

from rbdspy.envs.actions import Act  # noqa: E402
from rbdspy.envs.miniwob import MiniWoB  # noqa: E402
from rbdspy.envs.miniwob_browser import BROWSER, DRIVER, LIFTED_MS, BrowserMissing, group_members  # noqa: E402
from rbdspy.envs.miniwob_tasks import HELD_OUT_TYPES  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TYPES = ["click-button", "enter-text", "choose-list", "click-checkboxes", "focus-text"]
HELD_OUT = sorted(HELD_OUT_TYPES)[0]  # by the constant: no test names a held-out type


def _browser_installed() -> bool:
    import shutil

    return shutil.which(BROWSER) is not None and shutil.which(DRIVER) is not None


needs_browser = pytest.mark.skipif(
    not _browser_installed(), reason="Chromium is not installed (apt-get install chromium chromium-driver)"
)


@pytest.fixture(scope="module")
def web():
    if not _browser_installed():
        pytest.skip("Chromium is not installed (apt-get install chromium chromium-driver)")
    env = MiniWoB(TYPES)
    yield env
    env.close()


def _quoted(utterance: str) -> str:
    return re.search(r'"([^"]+)"', utterance).group(1)


def test_a_reset_gives_the_utterance_and_the_elements(web):
    obs = web.reset("miniwob/click-button/train/1")
    assert obs.task_description == 'Click on the "Ok" button.' == web.describe("miniwob/click-button/train/1")
    assert '[6] button "Ok"' in obs.text.splitlines()
    assert "click(6)" in obs.admissible and all(isinstance(a, str) for a in obs.admissible)
    assert "left" not in obs.text and "width" not in obs.text  # no layout boxes
    assert obs.whereabouts.place == "click-button page" and "Ok" in obs.whereabouts.in_view
    assert web.kind_of("miniwob/click-button/train/1") == "click-button"


def test_the_timer_is_lifted_and_the_raw_reward_read(web):
    obs = web.reset("miniwob/click-button/dev/10000")
    assert web.episode_max_time() == LIFTED_MS  # read back from the page: not its 10 s
    button = web.render_action(Act(template="click {}", args=(_quoted(obs.task_description),)))
    assert button in obs.admissible
    result = web.step(button)
    assert result.valid and result.done and result.won and web.success
    assert result.score == web.score == 1.0  # the raw reward: a time-discounted one is below 1


def test_a_wrong_action_is_rejected_with_why_and_the_episode_goes_on(web):
    web.reset("miniwob/click-button/train/1")  # Click on the "Ok" button.
    for action, why in [
        ("click(999)", "There is no element [999] on the page."),
        ('fill(6, "x")', "[6] is a button: it takes no text."),
        ('select(6, "x")', "[6] is a button, not a list of options."),
        ('press(6, "F13")', 'Unknown key "F13"'),
        ("dance wildly", "Not an action of this page"),
        ("", "No action given."),
    ]:
        result = web.step(action)
        assert not result.valid and not result.done and not result.won, action
        assert result.observation.startswith(why), result.observation
        assert '[6] button "Ok"' in result.observation  # the page again, unchanged
    assert web.step("click(4)").valid and not web.done  # a text: the page waits for a button
    web.reset("miniwob/click-button/train/0")  # Click on the "okay" button.
    wrong = web.step('click("next")')  # another button: the page ends the episode as a failure
    assert wrong.valid and wrong.done and not wrong.won and web.score == -1.0
    assert web.step("click(6)").valid is False and web.admissible_actions() == []


def test_an_action_the_page_cannot_read_reaches_a_users_agent_as_the_pages_rejection(web):
    from rbdspy.maps.tools import EnvironmentTools

    tools = EnvironmentTools(web, "miniwob/click-button/train/1")
    answer = tools.act("close(1)")  # no action of the page's: the agent is told why, not an error
    assert answer.startswith("Not an action of this page") and "click(6)" in answer
    rejected = tools.trajectory().steps[-1]
    assert rejected.metadata["valid"] is False and "act" not in rejected.metadata
    assert tools.trajectory().metadata["invalid_actions"] == 1  # counted as EnvAgent's episodes count them


def test_fill_types_the_text_replacing_what_was_there(web):
    obs = web.reset("miniwob/enter-text/train/0")
    field = next(line for line in obs.text.splitlines() if "textbox" in line).split("]")[0].strip("[")
    assert f"fill({field}, {{text}} )" in obs.admissible  # the template the agent completes
    assert 'value="abc"' in web.step(f"type [{field}] abc").observation
    typed = web.step(f'fill({field}, "{_quoted(obs.task_description)}")')
    assert f'value="{_quoted(obs.task_description)}" focused' in typed.observation  # replaced, not appended
    assert web.step('click("Submit")').won


def test_select_chooses_an_option_and_a_list_lists_them(web):
    obs = web.reset("miniwob/choose-list/train/0")
    wanted = obs.task_description.removeprefix("Select ").split(" from the list")[0]
    assert f'select(4, "{wanted}")' in obs.admissible
    assert not web.step('select(4, "no such option")').valid
    assert f'value="{wanted}"' in web.step(f'select(4, "{wanted.lower()}")').observation
    assert web.step("click(5)").won


def test_typed_actions_name_elements_not_refs(web):
    web.reset("miniwob/click-checkboxes/train/0")
    act = web.parse_action("click [8]")
    assert (act.template, act.args) == ("click {}", ("HF2",))
    assert web.render_action(act) == "click(8)" and web.parse_action('click("HF2")') == act
    assert web.parse_action('fill(8, "x")').args == ("HF2", "x")
    assert web.parse_action("fill(8, {text} )") is None  # a template is no action


def test_held_out_types_are_refused(web):
    for call in (
        lambda: web.tasks("train", [HELD_OUT]),
        lambda: web.reset(f"miniwob/{HELD_OUT}/train/0"),
        lambda: web.describe(f"miniwob/{HELD_OUT}/dev/10000"),
        lambda: MiniWoB([HELD_OUT]),
    ):
        with pytest.raises(ValueError, match="held-out MiniWoB type"):
            call()
    assert not set(web.task_types()) & HELD_OUT_TYPES


def test_seeds_split_train_dev_and_test_disjointly(web):
    assert [r.id for r in web.tasks("dev", ["focus-text"], limit=2)] == [
        "miniwob/focus-text/dev/10000",
        "miniwob/focus-text/dev/10001",
    ]
    with pytest.raises(ValueError, match="seed 20003 is not a dev seed .it is a test seed."):
        web.reset("miniwob/focus-text/dev/20003")


def test_a_missing_browser_or_driver_is_one_line_naming_the_packages():
    for options in ({"browser": "/nonexistent/chromium"}, {"driver": "/nonexistent/chromedriver"}):
        with pytest.raises(BrowserMissing) as raised:
            MiniWoB(["click-button"], **options)
        message = str(raised.value)
        assert "\n" not in message and "apt-get install chromium chromium-driver" in message
        assert next(iter(options.values())) in message


@needs_browser
def test_close_ends_the_browser():
    env = MiniWoB(["focus-text"])
    group = env.browser_group
    assert len(group_members(group)) > 2  # the watchdog, the driver, the browser's processes
    env.close()
    env.close()
    assert group_members(group) == []


@needs_browser
def test_two_workers_have_a_browser_each_and_closing_one_leaves_the_other_playing(web):
    other = MiniWoB(["focus-text"])  # a second worker's adapter, beside the module's
    try:
        assert other.browser_group != web.browser_group and len(group_members(other.browser_group)) > 2
        assert not set(group_members(other.browser_group)) & set(group_members(web.browser_group))
        assert other.reset("miniwob/focus-text/train/0").task_description
    finally:
        other.close()
    assert group_members(other.browser_group) == [] and group_members(web.browser_group)
    obs = web.reset("miniwob/click-button/train/1")
    result = web.step(web.render_action(Act(template="click {}", args=(_quoted(obs.task_description),))))
    assert result.won  # the first worker's browser still plays its page


CHILD = """
import os, signal
from pathlib import Path
from rbdspy.envs.miniwob import MiniWoB
from rbdspy.envs.miniwob_browser import group_members
env = MiniWoB(["click-button"])
env.reset("miniwob/click-button/train/0")
names = sorted({Path(f"/proc/{pid}/comm").read_text().strip() for pid in group_members(env.browser_group)})
print(env.browser_group, ",".join(names), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


@needs_browser
def test_no_browser_outlives_a_process_killed_with_sigkill():
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == -9, done.stderr
    group, names = done.stdout.strip().splitlines()[-1].split()
    assert "chromium" in names.split(",") and "chromedriver" in names.split(","), names
    deadline = time.monotonic() + 10
    while group_members(int(group)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert group_members(int(group)) == []  # every browser process of the killed adapter is gone


def test_an_agent_on_a_scripted_lm_plays_a_page_and_its_experience_is_typed(web):
    import dspy
    from dspy.utils import DummyLM

    from rbdspy.agent import EnvAgent
    from rbdspy.maps.experience import experience_of

    tid = "miniwob/enter-text/train/0"
    text = _quoted(web.describe(tid))
    lm = DummyLM(
        [{"reasoning": "", "action": a} for a in (f'fill(5, "{text}")', "click(6)")], adapter=dspy.JSONAdapter()
    )
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        trajectory = EnvAgent(web, max_steps=4)(task=web.describe(tid), task_id=tid).trajectory
    assert trajectory.outcome is True and trajectory.metadata["kind"] == "enter-text"
    assert trajectory.steps[-1].content == "The page ended the episode."  # no reward shown to a judge
    steps = experience_of(trajectory).steps
    assert [(s.place, s.act.template, s.act.args) for s in steps] == [
        ("enter-text page", "fill {} {}", ("tt", text)),
        ("enter-text page", "click {}", ("Submit",)),
    ]


def test_a_users_react_shown_a_made_up_form_wins_a_page_and_its_won_calls_are_the_next_pages_demos(web, tmp_path):
    import dspy
    from dspy.utils import DummyLM

    from rbdspy.agent.user_react import UserReAct
    from rbdspy.loop.demo_memory import DemoMemory
    from rbdspy.loop.retriever import MemoryRetriever
    from rbdspy.memory import MemoryStore
    from rbdspy.memory.embedders import HashEmbedder

    def episode(text):
        calls = [("look", {}), ("act", {"action": f'fill(5, "{text}")'}), ("act", {"action": "click(6)"})]
        turns = [{"next_thought": "go", "next_tool_name": n, "next_tool_args": a} for n, a in calls]
        finish = {"next_thought": "done", "next_tool_name": "finish", "next_tool_args": {}}
        return [*turns, finish, {"reasoning": "", "answer": "done"}]

    first, second = "miniwob/enter-text/train/1", "miniwob/enter-text/train/2"
    lm = DummyLM([*episode(_quoted(web.describe(first))), *episode(_quoted(web.describe(second)))])
    with MemoryStore(tmp_path / "bank", HashEmbedder(dim=32)) as store:
        retriever = MemoryRetriever(store, k=1, min_similarity=None)
        bank = DemoMemory(UserReAct(web, max_iters=6, starter=True), store, retriever=retriever, trust_outcome=True)
        with dspy.context(lm=lm):
            won = bank(task=web.describe(first), task_id=first)
            again = bank(task=web.describe(second), task_id=second)
    assert won.trajectory.outcome is True and again.trajectory.outcome is True
    (item,) = won.memories_added
    steps = [d for d in item.demos if d.predictor == "react.react"]
    assert steps[1].outputs["next_tool_args"] == {"action": f'fill(5, "{_quoted(web.describe(first))}")'}
    # The second page's first step is shown the made-up form and, ahead of it, the first page's calls.
    prompts = ["\n".join(str(m["content"]) for m in call["messages"]) for call in lm.history]
    shown = next(p for p in prompts if _quoted(web.describe(second)) in p)
    assert shown.index(_quoted(web.describe(first))) < shown.index('Type "blue" as the colour and press Save.')
    assert [m.id for m in again.memories_used] == [item.id]


def test_a_users_react_v2_wins_a_page_in_its_bank_and_the_won_calls_are_kept_as_demos(web, tmp_path):
    import dspy
    from dspy.utils import DummyLM

    from rbdspy.agent.user_react import UserReAct
    from rbdspy.loop.demo_memory import DemoMemory
    from rbdspy.memory import MemoryStore
    from rbdspy.memory.embedders import HashEmbedder

    page = "miniwob/enter-text/train/3"
    text = _quoted(web.describe(page))
    calls = [("act", {"action": f'fill(5, "{text}")'}), ("act", {"action": "click(6)"}), ("submit", {"answer": "done"})]
    lm = DummyLM([{"next_thought": "next", "tool_calls": {"tool_calls": [{"name": n, "args": a}]}} for n, a in calls])
    with MemoryStore(tmp_path / "bank", HashEmbedder(dim=32)) as store:
        bank = DemoMemory(UserReAct(web, max_iters=6, react=dspy.ReActV2), store, trust_outcome=True)
        with dspy.context(lm=lm):
            won = bank(task=web.describe(page), task_id=page)
    assert isinstance(bank.agent.react, dspy.ReActV2) and won.trajectory.outcome is True
    (item,) = won.memories_added
    played = [call for d in item.demos for call in d.outputs["tool_calls"]["tool_calls"]]
    assert played == [{"name": n, "args": a} for n, a in calls]  # every won step, as ReActV2 called it


def test_one_web_episode_in_a_bank_is_one_mlflow_trace_with_every_stage(web, tmp_path, monkeypatch):
    import dspy
    import mlflow
    from dspy.utils import DummyLM

    import rbdspy
    from rbdspy import tracking
    from rbdspy.agent.user_react import UserReAct
    from rbdspy.memory.embedders import HashEmbedder

    submit = {"next_thought": "t", "next_tool_name": "act", "next_tool_args": {"action": "click(6)"}}
    lesson = {"title": "Read the page", "description": "When a page has a form.", "content": "Fill, then submit."}
    answers = {
        "fields: `verdict`": {"verdict": "success"},
        "fields: `lessons`": {"lessons": [lesson]},
        "fields: `next_thought`": submit,
        "fields: `reasoning`, then `answer`": {"reasoning": "", "answer": "done"},
    }
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'm.db'}")
    monkeypatch.setenv(tracking.AUTOLOG_ENV, "1")
    uri = mlflow.get_tracking_uri()
    try:
        with rbdspy.MemoryStore(tmp_path / "bank", embedder=HashEmbedder(dim=32)) as store:
            bank = rbdspy.paper_bank(UserReAct(web, max_iters=2), store)
            lm = DummyLM(answers, adapter=dspy.JSONAdapter())
            tid = "miniwob/enter-text/train/3"
            with tracking.run("one-web-episode", experiment="web") as active, dspy.context(lm=lm):
                bank(task=web.describe(tid), task_id=tid)
        mlflow.flush_trace_async_logging()
        (trace,) = mlflow.search_traces(run_id=active.info.run_id, return_type="list")
    finally:
        mlflow.dspy.autolog(disable=True, silent=True)
        mlflow.set_tracking_uri(uri)
    names = {span.name for span in trace.data.spans}
    stages = {"ReasoningBank.forward", "MemoryRetriever.forward", "ReAct.forward", "Tool.act", "Extractor.forward"}
    assert stages <= names and any(name.endswith("Judge.forward") for name in names)


def test_compile_agent_compiles_a_users_react_on_train_pages_with_the_reward_as_metric(tmp_path, monkeypatch):
    import dspy
    from dspy.utils import DummyLM
    from typer.testing import CliRunner

    from rbdspy.agent.compiled_agent import card
    from rbdspy.agent.user_react import UserReAct
    from rbdspy.cli import app
    from rbdspy.cli import compile_agent as command

    if not _browser_installed():
        pytest.skip("Chromium is not installed (apt-get install chromium chromium-driver)")
    click = {"next_thought": "t", "next_tool_name": "act", "next_tool_args": {"action": "click(6)"}}
    answers = {
        "fields: `next_thought`": click,  # click-button train/0's button is [6]; every call the same
        "fields: `reasoning`, then `answer`": {"reasoning": "", "answer": "done"},
    }
    monkeypatch.setattr(command, "lm_for", lambda spec: DummyLM(answers, adapter=dspy.JSONAdapter()))
    out = tmp_path / "compiled"
    args = ["compile-agent", "--env", "web", "--types", "click-button", "--per-type", "2", "--max-demos", "1"]
    result = CliRunner().invoke(app, [*args, "--max-iters", "2", "--out", str(out)])
    assert result.exit_code == 0, result.output
    saved = card(out)
    assert saved["train_tasks"] == ["miniwob/click-button/train/0", "miniwob/click-button/train/1"]
    # One won episode is the one demo asked for: the compile stops there.
    assert saved["played"] == [{"task_id": "miniwob/click-button/train/0", "won": True}] and saved["won"] == 1
    assert saved["bootstrapped_demos"]["react.react"] == 1 and "BootstrapFewShot" in saved["optimizer"]
    env = MiniWoB(["click-button"])
    try:
        demos = UserReAct(env, compiled=out).react.react.demos
        first = env.describe("miniwob/click-button/train/0")
    finally:
        env.close()
    assert demos[0]["task"] == first and len(demos) > 1  # the won page's call, the starter after it


def test_matts_parallel_plays_one_page_k_times_around_a_users_react_and_records_each_rollout(web, tmp_path):
    """The test-time view of MaTTS on the web (`rbdspy.bench.selection`) reads each rollout's outcome
    from the page and the selector's pick: every rollout starts from the same fresh page."""
    import itertools

    import dspy
    from dspy.utils import DummyLM

    import rbdspy
    from rbdspy.agent.user_react import UserReAct
    from rbdspy.bench.cost import lm_role
    from rbdspy.bench.player import task_record
    from rbdspy.bench.selection import selection_view
    from rbdspy.bench.tasks import BenchTask
    from rbdspy.lm.usage import LmUsage
    from rbdspy.memory.embedders import HashEmbedder
    from rbdspy.scaling.matts import MaTTS

    tid = "miniwob/enter-text/train/4"
    text = _quoted(web.describe(tid))
    lesson = {"title": "Fill, then submit", "description": "A form with one field.", "content": "Type, then click."}
    answers = {
        "fields: `verdict`": {"verdict": "success"},
        "`best_index`": {"rationale": "both submitted", "best_index": 1},
        "fields: `lessons`": {"lessons": [lesson]},
        "fields: `reasoning`, then `answer`": {"reasoning": "", "answer": "done"},
    }

    fill = {"next_thought": "fill", "next_tool_name": "act", "next_tool_args": {"action": f'fill(5, "{text}")'}}
    submit = {"next_thought": "submit", "next_tool_name": "act", "next_tool_args": {"action": "click(6)"}}
    finish = {"next_thought": "done", "next_tool_name": "finish", "next_tool_args": {}}
    turns = itertools.cycle([fill, submit, finish])  # every rollout plays the same three turns

    class Turns(DummyLM):
        """ReAct's turns in order within each rollout; the other predictors answered by their fields."""

        def forward(self, prompt=None, messages=None, **kwargs):
            step = "fields: `next_thought`" in str(messages[-1]["content"])
            self.answers = {"fields: `next_thought`": next(turns), **answers} if step else answers
            return super().forward(prompt=prompt, messages=messages, **kwargs)

    with rbdspy.MemoryStore(tmp_path / "bank", embedder=HashEmbedder(dim=32)) as store:
        mat = MaTTS(rbdspy.paper_bank(UserReAct(web, max_iters=4), store), k=2, mode="parallel")
        lm = Turns(answers, adapter=dspy.JSONAdapter())
        with dspy.context(lm=lm), LmUsage(classify=lm_role) as usage:
            pred = mat(task=web.describe(tid), task_id=tid)
        task = BenchTask(0, tid, "measure", "enter-text")
        record = task_record(task, "matts-parallel-k3", pred, usage, 1.0, len(store))
    assert [r.trajectory.outcome for r in pred.rollouts] == [True, True]
    assert pred.chosen == 1 and pred.memories_added
    assert record["rollouts"] == [True, True] and record["chosen"] == 1
    view = selection_view([record])
    assert (view["n"], view["k"], view["first"], view["selected"], view["oracle"]) == (1, 2, 1, 1, 1)
