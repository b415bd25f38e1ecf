"""Compiling a user's own ReAct on train tasks with the environment's reward as the metric, on a
scripted LM in a TextWorld house: a won episode's calls become demos and a lost one's do not, the
user's starter stays after them, the program and its card are saved as JSON and load back into
the agent; a file that is not such a program is refused naming it; the bench's compiled-agent arm
plays a user agent only."""

from __future__ import annotations

import json
from pathlib import Path

import dspy
import pytest
from dspy.utils import DummyLM

from rbdspy.agent.compiled_agent import (
    CARD_FILE,
    PROGRAM_FILE,
    card,
    load_compiled,
    program_path,
    shipped,
    shipped_for,
)
from rbdspy.agent.user_react import UserReAct, starter_demos
from rbdspy.bench.agent_variants import agent_options
from rbdspy.optimizers.agent_compile import agent_trainset, compile_agent, reward_metric, save_compiled_agent
from tests.house_testing import react_script, small_house


@pytest.fixture(scope="module")
def house(tmp_path_factory):
    env = small_house(tmp_path_factory.mktemp("tw"), train=3)
    yield env
    env.close()


def test_won_train_episodes_give_the_demos_the_starter_stays_and_the_program_loads_back(house, tmp_path):
    task_type = house.task_types()[0]
    trainset = agent_trainset(house, [task_type], per_type=2)
    assert [ex.task_id for ex in trainset] == [t.id for t in house.tasks("train", [task_type], limit=2)]
    first, second = (house.tasks("train", [task_type], limit=2)[i] for i in (0, 1))
    # The first train episode plays its gold path (won), the second stops at once (lost).
    lm = DummyLM([*react_script(house.gold_path(first)), *react_script([])])
    with dspy.context(lm=lm, adapter=dspy.ChatAdapter()):
        program, report = compile_agent(lambda: UserReAct(house, max_iters=6, starter=True), trainset, max_demos=2)
    assert report.played == [{"task_id": first.id, "won": True}, {"task_id": second.id, "won": False}]
    assert report.won == 1 and report.demos == {"react.react": 1, "react.extract.predict": 1}
    starter = starter_demos(house.action_example())
    demos = program.react.react.demos
    assert len(demos) == 1 + len(starter)  # the won episode's call, then the user's starter
    assert demos[0]["task"] == house.describe(first) and demos[0]["next_tool_name"] in ("act", "finish")
    assert [d["next_tool_name"] for d in demos[1:]] == [d["next_tool_name"] for d in starter]

    out = save_compiled_agent(program, tmp_path / "compiled", {"env": house.name, "won": report.won})
    assert json.loads((out / CARD_FILE).read_text()) == {"env": house.name, "won": 1}
    loaded = UserReAct(house, max_iters=6, compiled=out)
    assert [d["next_thought"] for d in loaded.react.react.demos] == [d["next_thought"] for d in demos]
    assert loaded.with_compiled(out / PROGRAM_FILE).react.react.demos[0]["task"] == house.describe(first)
    assert UserReAct(house).react.react.demos == []  # no compiled program: no demos


def test_the_metric_is_the_environments_outcome():
    won = dspy.Prediction(trajectory=type("T", (), {"outcome": True})())
    lost = dspy.Prediction(trajectory=type("T", (), {"outcome": None})())
    assert reward_metric(None, won) is True and reward_metric(None, lost) is False
    assert reward_metric(None, dspy.Prediction(answer="x")) is False  # no episode: not won


def test_a_file_that_is_not_a_compiled_agent_is_refused_naming_it(house, tmp_path):
    with pytest.raises(FileNotFoundError, match="no compiled agent at .*shipped:"):
        program_path(tmp_path / "nowhere")
    (tmp_path / "agent.pkl").write_bytes(b"x")
    with pytest.raises(ValueError, match="JSON only"):
        program_path(tmp_path / "agent.pkl")
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"judge.predict": {"demos": [], "signature": {}}}))
    with pytest.raises(ValueError, match="no state for react.react"):
        load_compiled(UserReAct(house), other)
    # A predictor's state holding more than DSPy saves (a `config` that would go with every LM
    # call, an endpoint included) loads without it; demos that are not examples are refused.
    agent = UserReAct(house)
    state = agent.dump_state()
    state["react.react"]["config"] = {"api_base": "http://elsewhere.invalid/v1"}
    hostile = tmp_path / "hostile.json"
    hostile.write_text(json.dumps(state))
    load_compiled(agent, hostile)
    assert agent.react.react.config == {}
    state["react.react"]["demos"] = {"not": "a list"}
    hostile.write_text(json.dumps(state))
    with pytest.raises(ValueError, match="demos are not a list"):
        load_compiled(agent, hostile)
    with pytest.raises(ValueError, match="ships no compiled agent for nowhere"):
        shipped_for("nowhere")
    with pytest.raises(ValueError, match="per_type must be at least 1"):
        agent_trainset(house, house.task_types(), per_type=0)


# The programs measured and kept as records once they left the package (docs/bench/*-compiled).
KEPT_PROGRAMS = sorted(
    p.parent for p in (Path(__file__).resolve().parents[2] / "docs" / "bench").glob("*-compiled/program.json")
)


@pytest.mark.parametrize("program", [*shipped(), *KEPT_PROGRAMS], ids=lambda p: getattr(p, "name", p))
def test_every_shipped_or_kept_program_has_its_card_and_loads_into_a_user_agent(house, program):
    about = card(program)
    assert {"agent", "env", "task_types", "train_tasks", "metric", "optimizer", "played", "won"} <= set(about)
    assert about["won"] >= 1 and about["won"] == sum(row["won"] for row in about["played"])
    # the metric named is the one that chose this optimizer's demos
    assert ("walkthrough" in about["optimizer"]) == ("walkthrough" in about["metric"])
    if program in shipped():
        assert shipped_for(about["env"]) == program
    # the predictors are named alike in every environment: the program loads into this house's agent
    saved = json.loads(program_path(program).read_text())["react.react"]["demos"]
    assert len(saved) >= about["bootstrapped_demos"]["react.react"] >= 1
    # into the form of agent it was compiled for (a look tool, or the first observation given)
    options = {k: v for k, v in agent_options(about["agent"]).items() if k != "compiled"}
    agent = UserReAct(house, compiled=program, **options)
    assert [d["next_tool_name"] for d in agent.react.react.demos] == [d["next_tool_name"] for d in saved]


def test_the_records_of_programs_that_left_the_package_are_kept():
    """A compiled program that was measured and left the package stays as the record of its arm."""
    assert {p.name for p in KEPT_PROGRAMS} >= {"web-react-compiled", "house-react-compiled"}


def test_walkthroughs_compile_an_agent_given_its_first_observation_and_no_other_form_loads_it(house, tmp_path):
    from rbdspy.optimizers.walkthrough_demos import compile_from_walkthroughs

    trainset = agent_trainset(house, [house.task_types()[0]], per_type=1)
    agent, report = compile_from_walkthroughs(UserReAct(house, look_tool=False), house, trainset, max_demos=1)
    (demo,) = agent.react.react.demos
    first = trainset[0].task_id
    assert report.won == 1 and demo["next_tool_name"] == "finish" and '"look"' not in demo["trajectory"]
    assert demo["observation"].startswith(house.reset(first).text)  # what the episode showed first, as input
    save_compiled_agent(agent, tmp_path / "act", card={"agent": "react-act"})
    with pytest.raises(ValueError, match="compiled for another form of this agent: the demos of react.react hold obs"):
        UserReAct(house, compiled=tmp_path / "act")  # a look tool and no observation input: the demos don't fit
    looking, _ = compile_from_walkthroughs(UserReAct(house), house, trainset, max_demos=1)
    save_compiled_agent(looking, tmp_path / "look", card={"agent": "react"})
    with pytest.raises(ValueError, match="another form of this agent: the demos of react.react lack observation"):
        UserReAct(house, look_tool=False, compiled=tmp_path / "look")
    assert UserReAct(house, look_tool=False, compiled=tmp_path / "act").react.react.demos[0]["observation"]


def test_the_compiled_agent_arm_plays_a_user_agent_only(house, tmp_path, monkeypatch):
    import rbdspy.agent.compiled_agent as compiled_agent
    from rbdspy.agent import EnvAgent
    from rbdspy.bench.arms import ARMS, BuildContext
    from rbdspy.memory import MemoryStore
    from rbdspy.memory.embedders import HashEmbedder

    with MemoryStore(tmp_path / "bank", HashEmbedder(dim=32)) as store:
        ctx = BuildContext(agent=EnvAgent(house, max_steps=3), store=store)
        with pytest.raises(ValueError, match="plays a user agent"):
            ARMS["compiled-agent"].build(ctx)
        ctx = BuildContext(agent=UserReAct(house), store=store)
        monkeypatch.setattr(compiled_agent, "SHIPPED_DIR", tmp_path / "none shipped")
        with pytest.raises(ValueError, match="ships no compiled agent for textworld"):
            ARMS["compiled-agent"].build(ctx)


def test_walkthroughs_of_train_tasks_give_demos_where_the_environment_scored_them_won(house, monkeypatch):
    from rbdspy.optimizers.walkthrough_demos import compile_from_walkthroughs

    task_type = house.task_types()[0]
    trainset = agent_trainset(house, [task_type], per_type=3)
    first, second, third = (ex.task_id for ex in trainset)
    gold = house.gold_path
    # the first task's walkthrough cut short: not won, so no demo from it
    monkeypatch.setattr(house, "gold_path", lambda ref: gold(ref)[:-1] if str(ref) == first else gold(ref))
    agent, report = compile_from_walkthroughs(UserReAct(house, starter=True), house, trainset, max_demos=2)
    assert report.played == [
        {"task_id": first, "won": False},
        {"task_id": second, "won": True},
        {"task_id": third, "won": True},
    ]
    assert report.won == 2 and report.demos == {"react.react": 2}
    demos = agent.react.react.demos
    starter = starter_demos(house.action_example())
    assert len(demos) == 2 + len(starter) and [d["next_thought"] for d in demos[2:]] == [
        d["next_thought"] for d in starter
    ]
    for demo, task_id in zip(demos[:2], (second, third), strict=True):
        assert demo["task"] == house.describe(task_id) and demo["next_tool_name"] == "finish"
        # the whole won episode is in the demo's trajectory, each action as the tools answered it
        assert all(f'"action": "{action}"' in demo["trajectory"] for action in gold(task_id))
    with pytest.raises(ValueError, match="max_demos must be at least 1"):
        compile_from_walkthroughs(UserReAct(house), house, trainset, max_demos=0)
    with pytest.raises(ValueError, match="needs a ReAct, whose step predictor writes next_tool_name"):
        compile_from_walkthroughs(UserReAct(house, react=dspy.ReActV2), house, trainset)


def test_compile_agent_refuses_an_unknown_optimizer_and_walkthroughs_where_there_are_none(tmp_path):
    from typer.testing import CliRunner

    from rbdspy.cli import app

    def run(*args: str) -> str:
        result = CliRunner().invoke(app, ["compile-agent", "--types", "x", "--out", str(tmp_path / "out"), *args])
        assert result.exit_code == 2
        return " ".join(result.output.replace("│", " ").split())

    assert "'nope': choose bootstrap or walkthroughs" in run("--optimizer", "nope")
    assert "miniwob gives no walkthroughs (gold paths) to compile from" in run(
        "--env", "web", "--optimizer", "walkthroughs"
    )
    assert not (tmp_path / "out").exists()
