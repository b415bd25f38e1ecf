"""Compiling a user's own ReAct from the environment's walkthroughs of train tasks.

Where the agent wins too few train episodes for `BootstrapFewShot` to keep any (a user's ReAct in
the TextWorld house: none of 12), the environment can still label: its walkthrough of a train task
(`gold_path`) is a won episode. Each walkthrough is played through the agent's own tools, so what a
demo shows is what the tools answered, and kept only where the environment scored the episode won.
Its last call (`finish`, after the whole episode), the call `BootstrapFewShot` keeps of a won
episode, becomes one demo of the ReAct's step predictor, ahead of the user's own demos (a
starter). This is DSPy's LabeledFewShot with labels the environment wrote: no LM is called.

    trainset = agent_trainset(env, ["1"], per_type=4)
    agent, report = compile_from_walkthroughs(UserReAct(env, starter=True), env, trainset, max_demos=3)
    save_compiled_agent(agent, "out/", card={...})

Only train tasks are replayed (`agent_trainset`), so tasks and worlds a compiled agent is measured
on were never shown.
"""

from __future__ import annotations

from collections.abc import Sequence

import dspy

from rbdspy.agent.user_react import DONE_THOUGHT, LOOK_THOUGHT, Call, act_thought, react_demos, step_predictor
from rbdspy.envs.base import Environment, TaskRef
from rbdspy.maps.tools import EnvironmentTools
from rbdspy.optimizers.agent_compile import AgentCompileReport


def walkthrough_calls(env: Environment, task_id: str, look_tool: bool = True) -> tuple[str, list[Call], str] | None:
    """The task's walkthrough played through a ReAct's tools (`look` where it has one, then `act`
    per action, then `finish`): the task, the calls and what was seen first, or None where the
    environment did not score it won."""
    ref = TaskRef.parse(task_id)
    path = env.gold_path(ref)  # before the episode starts: an environment may reset to find it
    tools = EnvironmentTools(env, ref)
    first = tools.seen()
    calls: list[Call] = [(LOOK_THOUGHT, "look", {}, tools.look())] if look_tool else []
    for action in path:
        calls.append((act_thought(action), "act", {"action": action}, tools.act(action)))
    if not tools.trajectory().outcome:
        return None
    calls.append((DONE_THOUGHT, "finish", {}, "Completed."))
    return tools.task, calls, first


def compile_from_walkthroughs(
    agent: dspy.Module, env: Environment, trainset: Sequence[dspy.Example], max_demos: int = 3
) -> tuple[dspy.Module, AgentCompileReport]:
    """`agent` (a ReAct over `env`'s tools, changed in place and returned) with the last call of up
    to `max_demos` won walkthroughs of `trainset`'s tasks as its step predictor's demos, ahead of its
    own; the report lists every walkthrough played and whether it was won."""
    if max_demos < 1:
        raise ValueError(f"max_demos must be at least 1; got {max_demos}")
    found = step_predictor(agent)
    if found is None:
        raise ValueError("compiling from walkthroughs needs a ReAct, whose step predictor writes next_tool_name")
    look_tool = getattr(agent, "look_tool", True)  # UserReAct's form: a look tool, or the first observation given
    report, demos = AgentCompileReport(), []
    for example in trainset:
        if len(demos) == max_demos:
            break
        played = walkthrough_calls(env, example.task_id, look_tool)
        report.played.append({"task_id": example.task_id, "won": played is not None})
        if played is not None:
            task, calls, first = played
            demos.append(react_demos(task, calls, None if look_tool else first)[-1])
    name, step = found
    report.demos = {name: len(demos)}
    step.demos = [*demos, *step.demos]
    return agent, report
