"""EnvAgent's loop on DummyLM: scripted actions, invalid ones, LM errors, the step limit."""

import asyncio

import dspy
import pytest
from dspy.utils import DummyLM

from rbdspy.agent import EnvAgent
from rbdspy.agent.episode import clean_action
from rbdspy.envs import actions_of
from rbdspy.loop.agent_io import accepts_input

TASK_ID = "fake/lamp/train/0"


class _Script:
    """DummyLM answers in order; the call numbered `fail_at` raises instead (then it goes on)."""

    def __init__(self, actions, fail_at):
        self.answers, self.fail_at, self.calls = [{"action": a} for a in actions], fail_at, 0

    def __iter__(self):
        return self

    def __next__(self):
        call, self.calls = self.calls, self.calls + 1
        if call == self.fail_at:
            raise RuntimeError("model crashed")
        index = call - (1 if self.fail_at is not None and call > self.fail_at else 0)
        if index >= len(self.answers):
            raise StopIteration
        return self.answers[index]


def scripted(*actions, fail_at=None):
    """A DummyLM answering `actions` in order; with fail_at=i the i-th call raises."""
    lm = DummyLM([])
    lm.answers = _Script(actions, fail_at)
    return lm


def test_scripted_episode_succeeds_and_records_an_invalid_action(fake_env):
    dspy.configure(lm=scripted("look around", "dance wildly", "take lamp", "turn on lamp", "read note"))
    agent = EnvAgent(fake_env, max_steps=10)
    pred = agent(task=agent.describe(TASK_ID), task_id=TASK_ID, memory="")
    traj = pred.trajectory
    assert traj.outcome is True and pred.answer == "Stopped after 5 actions: the environment ended the episode."
    assert "success" not in traj.render() and "score" not in traj.render()  # the judge must not read the label
    assert actions_of(traj) == ["look around", "dance wildly", "take lamp", "turn on lamp", "read note"]
    invalid = [s for s in traj.steps if s.role == "env" and s.metadata.get("valid") is False]
    assert len(invalid) == 1 and "No known action" in invalid[0].content
    meta = traj.metadata
    assert (
        meta["invalid_actions"] == 1
        and meta["n_steps"] == 5
        and meta["stopped"] == "done"
        and meta["task_id"] == TASK_ID
    )
    assert traj.task == agent.describe(TASK_ID)


def test_step_limit_stops_a_failing_episode(fake_env):
    dspy.configure(lm=scripted(*["wait"] * 10))
    pred = EnvAgent(fake_env, max_steps=3)(task="light the lamp", task_id=TASK_ID)
    assert pred.trajectory.outcome is False
    assert pred.trajectory.metadata["n_steps"] == 3 and pred.trajectory.metadata["stopped"] == "max_steps"


def test_an_lm_error_is_recorded_and_wastes_one_step(fake_env):
    dspy.configure(lm=scripted("take lamp", "turn on lamp", "read note", fail_at=1))
    pred = EnvAgent(fake_env, max_steps=3)(task="light the lamp", task_id=TASK_ID)
    traj = pred.trajectory
    errors = [s for s in traj.steps if s.role == "error"]
    assert len(errors) == 1 and "model crashed" in errors[0].content and errors[0].metadata["step"] == 1
    # 3 steps of budget: one action, one error, one action; the task is not finished
    assert actions_of(traj) == ["take lamp", "turn on lamp"] and traj.metadata["lm_errors"] == 1
    assert traj.outcome is False


def test_prompt_is_windowed_and_carries_memory(fake_env):
    lm = scripted("look around", "wait", "wait", "take lamp")
    dspy.configure(lm=lm)
    EnvAgent(fake_env, max_steps=4, history_window=1)(
        task="light the lamp", task_id=TASK_ID, memory="<<<MEMORY lesson MEMORY>>>"
    )
    last_prompt = lm.history[-1]["messages"][-1]["content"]
    assert "<<<MEMORY lesson MEMORY>>>" in last_prompt
    assert last_prompt.count("> wait") == 1 and "> look around" not in last_prompt  # window of one step
    assert "take lamp" in last_prompt  # admissible actions listed


def test_aforward_matches_forward(fake_env):
    dspy.configure(lm=scripted("take lamp", "turn on lamp", "read note"))
    pred = asyncio.run(EnvAgent(fake_env, max_steps=5).acall(task="light the lamp", task_id=TASK_ID))
    assert pred.trajectory.outcome is True and actions_of(pred.trajectory) == ["take lamp", "turn on lamp", "read note"]


def test_agent_plugs_into_the_bank_contract(fake_env):
    agent = EnvAgent(fake_env)
    assert accepts_input(agent, "memory")
    copy = agent.deepcopy()
    assert copy.env is fake_env and copy.act is not agent.act
    with pytest.raises(ValueError, match="task_id"):
        agent(task="light the lamp")


def test_clean_action_reads_what_the_model_meant():
    admissible = ["open door to kitchen", "look around"]
    assert clean_action("Action: Open Door to Kitchen.", admissible) == "open door to kitchen"
    assert clean_action("`look around`\nbecause it is dark", admissible) == "look around"
    assert clean_action("", admissible) == ""


def test_real_twx_episode_with_scripted_gold(twx_env):
    ref = twx_env.tasks("train", ["simonsays"])[0]
    gold = twx_env.gold_path(ref)
    dspy.configure(lm=scripted(*gold))
    agent = EnvAgent(twx_env, max_steps=len(gold) + 2)
    pred = agent(task=agent.describe(ref.id), task_id=ref.id)
    assert pred.trajectory.outcome is True and actions_of(pred.trajectory) == gold


def test_on_step_reports_each_step_and_leaves_the_lm_calls_alone(fake_env):
    """The hook sees every step as it happens (actions, invalid ones, an LM error), copies of the
    agent share it, and the prompts are the same as without it."""
    actions = ("look around", "dance wildly", "take lamp", "turn on lamp", "read note")
    plain = scripted(*actions, fail_at=2)
    dspy.configure(lm=plain)
    EnvAgent(fake_env, max_steps=10)(task="light the lamp", task_id=TASK_ID)

    events, calls_seen = [], []
    watched = scripted(*actions, fail_at=2)
    dspy.configure(lm=watched)

    def hook(event):
        events.append(event)
        calls_seen.append(len(watched.history))  # LM calls made so far: the step is reported at once

    agent = EnvAgent(fake_env, max_steps=10, on_step=hook)
    pred = agent.deepcopy()(task="light the lamp", task_id=TASK_ID)  # an optimizer's copy reports too

    assert [h["messages"] for h in watched.history] == [h["messages"] for h in plain.history]
    assert [(e.step, e.action, e.valid, e.done) for e in events] == [
        (1, "look around", True, False),
        (2, "dance wildly", False, False),
        (3, None, True, False),
        (4, "take lamp", True, False),
        (5, "turn on lamp", True, False),
        (6, "read note", True, True),
    ]
    assert "model crashed" in events[2].error and events[1].observation.startswith("No known action")
    assert all(e.task_id == TASK_ID and e.max_steps == 10 for e in events)
    assert calls_seen == [1, 2, 2, 3, 4, 5]  # the failed call is not in DummyLM's history
    assert pred.trajectory.outcome is True
    with pytest.raises(TypeError, match="on_step"):
        EnvAgent(fake_env, on_step="print")
