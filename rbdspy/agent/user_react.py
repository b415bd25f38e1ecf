"""A user's own agent: DSPy's `dspy.ReAct` over the tools a user would write for an environment.

    agent = UserReAct(env, max_iters=15)                  # dspy.ReAct, look and act tools
    agent = UserReAct(env, react=dspy.ReActV2)            # the same with DSPy's next ReAct
    agent = UserReAct(env, starter=True)                  # shown one made-up episode first
    agent = UserReAct(env, compiled="compiled/")          # with the demos `compile-agent` chose
    agent = UserReAct(env, look_tool=False)               # first observation as input; act only
    agent = UserReAct(env, play_to_end=True)              # goes on until the environment ends it
    bank = rbdspy.ReasoningBank(agent=agent, store=store)
    bank(task=env.describe(tid), task_id=tid)

None of `EnvAgent`'s techniques: no step policies, no answer check, no repeat guard. The ReAct reads
the task and the memory block a bank serves (`memory`) and calls `look()` and `act(action)`
(`rbdspy.maps.EnvironmentTools`, which record the episode's trajectory with the places the
environment named and its actions typed). With `show_map`, the tools also name the step the map of
the task's world offers beside each observation, when a bank hands the agent that map
(`world_map`): memory as a suggestion in the tool's answer, never an instruction.

With `starter`, the ReAct's step predictor is given, as its own demos, one made-up episode in the
environment's words (`ShowsActions.action_example`): a `look`, each action through `act`, then
`finish`. A user would write such a demo for a small model: the embedded 1.5B writes `act`'s
argument schema instead of an action until it has seen one call written out. It is the same
on every task and no memory: a bank's demos (`DemoMemory`) are served ahead of it.

With `compiled`, the agent's predictors take a compiled program's demos and instructions (a
shipped one by name, or what `rbdspy compile-agent` wrote: `rbdspy.agent.compiled_agent`), in place
of the starter's: a program compiled from a starter agent keeps the starter after its own demos.

With `look_tool=False`, the ReAct is given what the agent sees first (and the step memory
suggests there) as an input, `observation`, and has `act` alone: a 1.5B model with a `look` tool
calls it again and again, writing the action it means in its thought and `look` as the tool.

A step the model writes so that DSPy cannot parse it (an action as the tool's name) ends that
ReAct call; the episode goes on where it stands, in a fresh call given what is seen now, until the
episode's steps (`max_iters`, the failed step counted) are spent. A greedy model given the same
inputs writes the same step, so where the failed step was a fresh call's first, the agent given
what it sees is told once that its step could not be read; a second such failure, or one with a
look tool, ends the episode.

With `play_to_end`, the agent plays until the environment ends the episode (won, lost, or its
steps spent), as a user's loop over a game does: the 1.5B finishes a house quest after 2-6 actions,
without the thing it was asked for ("The broccoli cannot be taken."). A ReAct that finishes
earlier is called again, given where the episode stands, while it moved since its last call.

Only DSPy's public API is used (`react(signature, tools=..., max_iters=...)`, the prediction's
output fields), so the same agent runs on `dspy.ReAct` and `dspy.ReActV2`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import dspy
from dspy.utils.exceptions import AdapterParseError

from rbdspy.agent.compiled_agent import load_compiled
from rbdspy.core.lm_errors import raise_if_setup_error
from rbdspy.envs.base import Environment, TaskRef, world_of
from rbdspy.envs.capabilities import ActionExample, ShowsActions
from rbdspy.maps.tools import EnvironmentTools, tool_answer
from rbdspy.maps.world_map import WorldMap

SIGNATURE = "task, memory -> answer"
SEEING_SIGNATURE = "task, observation, memory -> answer"  # look_tool=False: the first observation as an input
# The trajectory's metadata key saying why an episode stopped early (an LM error), and its length cap.
STOPPED, STOPPED_CHARS = "stopped", 300
DEFAULT_MAX_ITERS = 15
# The fields DSPy's ReAct gives its step predictor and reads back from it (dspy.ReAct's docs).
STEP_OUTPUTS = ("next_thought", "next_tool_name", "next_tool_args")


# One call of a ReAct's tools as its step predictor sees it: the thought, the tool, its arguments and
# what the tool answered.
Call = tuple[str, str, dict[str, Any], str]
LOOK_THOUGHT = "First I see what there is to act on."
# Before what the agent sees, where its last step could not be read and nothing else has changed.
MISFORMATTED = "(Your last step could not be read: the tool is act or finish, and act's argument is one action.)\n"
DONE_THOUGHT = "The task is done."


def act_thought(action: str) -> str:
    """The thought a demo gives an action: the step the listed actions offer for the task."""
    return f"The listed action that does the next part of the task is {action}."


def react_demos(task: str, calls: list[Call], observation: str | None = None) -> list[dspy.Example]:
    """An episode's `calls` (ending with `finish`) as a ReAct step predictor's demos, one per call,
    each with the trajectory before it written as DSPy's Chat and JSON adapters write a ReAct
    trajectory to its step predictor; `observation`: what was seen first, for an agent given it as
    an input (`look_tool=False`)."""
    adapter = dspy.ChatAdapter()
    demos, done = [], {}
    seen = {} if observation is None else {"observation": observation}
    for i, (thought, tool, args, answer) in enumerate(calls):
        trajectory = adapter.format_user_message_content(dspy.Signature(f"{', '.join(done) or 'none'} -> x"), done)
        outputs = dict(zip(STEP_OUTPUTS, (thought, tool, args), strict=True))
        demos.append(dspy.Example(task=task, memory="", trajectory=trajectory if done else "", **seen, **outputs))
        done.update(
            {f"thought_{i}": thought, f"tool_name_{i}": tool, f"tool_args_{i}": args, f"observation_{i}": answer}
        )
    return demos


def starter_demos(example: ActionExample, look_tool: bool = True) -> list[dspy.Example]:
    """`example` as a ReAct step predictor's demos, one per step: `look` (or, with
    `look_tool=False`, what was seen first as the `observation` input), each action through `act`,
    then `finish` (`react_demos`)."""
    first = tool_answer(example.observation, example.admissible)
    calls: list[Call] = [(LOOK_THOUGHT, "look", {}, first)] if look_tool else []
    for n, (action, answer) in enumerate(example.steps):
        last = n == len(example.steps) - 1
        listed = example.listed[n] if example.listed else ([] if last else example.admissible)
        thought = example.thoughts[n] if example.thoughts else act_thought(action)
        calls.append((thought, "act", {"action": action}, tool_answer(answer, listed)))
    calls.append((DONE_THOUGHT, "finish", {}, "Completed."))
    return react_demos(example.task, calls, None if look_tool else first)


def _stopped(error: Exception) -> tuple[str, str]:
    """The answer of an episode `error` ended, and why, for the records."""
    return f"The agent stopped: {type(error).__name__}", f"{type(error).__name__}: {error}"


def _misformatted_step(error: AdapterParseError) -> bool:
    """Whether `error` is a ReAct step the model wrote so that it could not be parsed (and not its
    final answer's): the signature it failed to fill chooses the next tool."""
    return set(STEP_OUTPUTS) <= set(getattr(error.signature, "output_fields", {}))


def step_predictor(agent: dspy.Module) -> tuple[str, dspy.Predict] | None:
    """The name and predictor of `agent` that chooses a ReAct's next tool call (it writes
    `STEP_OUTPUTS`), or None where it has none."""
    for name, predictor in agent.named_predictors():
        if set(STEP_OUTPUTS) <= set(predictor.signature.output_fields):
            return name, predictor
    return None


class UserReAct(dspy.Module):
    """`react` (a ReAct class: `dspy.ReAct`, `dspy.ReActV2`) over `env`'s tools, one episode per
    call; `show_map`: the tools name the map's step where a bank hands one; `starter`: the step
    predictor is shown a made-up episode first (dspy.ReAct only); `compiled`: a compiled
    program's state (a shipped name, a directory or a .json) replaces the predictors' own;
    `look_tool=False`: the first observation is an input and `act` the only tool; `play_to_end`:
    a ReAct that finishes before the environment ends the episode is called again from there."""

    def __init__(
        self,
        env: Environment,
        max_iters: int = DEFAULT_MAX_ITERS,
        react: Callable[..., dspy.Module] = dspy.ReAct,
        show_map: bool = False,
        starter: bool = False,
        compiled: str | Path | None = None,
        look_tool: bool = True,
        play_to_end: bool = False,
    ):
        super().__init__()
        if max_iters < 1:
            raise ValueError(f"max_iters must be at least 1; got {max_iters}")
        self.env, self.max_iters, self.show_map, self.look_tool = env, max_iters, show_map, look_tool
        self.play_to_end = play_to_end
        self._episode: EnvironmentTools | None = None
        self._react_class = react
        tools = [self.look, self.act] if look_tool else [self.act]
        self.react = react(SIGNATURE if look_tool else SEEING_SIGNATURE, tools=tools, max_iters=max_iters)
        self.starter, self.compiled = starter, compiled
        if starter:
            self._show_example()
        if compiled is not None:
            self._check_form(load_compiled(self, compiled))

    def _check_form(self, path: Path) -> None:
        """Refuses a compiled program whose step demos were written for the other form of this
        agent (a look tool, or the first observation as an input): DSPy would load them and show
        them without what they hold."""
        found = step_predictor(self)
        demos = found[1].demos if found else []
        odd = [demo for demo in demos if ("observation" in demo) == self.look_tool]
        if odd:
            what = "hold observation" if self.look_tool else "lack observation"
            raise ValueError(f"{path} was compiled for another form of this agent: the demos of {found[0]} {what}")

    def with_compiled(self, compiled: str | Path) -> UserReAct:
        """The same agent (environment, ReAct, steps, map) with a compiled program's state."""
        return UserReAct(
            self.env,
            max_iters=self.max_iters,
            react=self._react_class,
            show_map=self.show_map,
            starter=self.starter,
            compiled=compiled,
            look_tool=self.look_tool,
            play_to_end=self.play_to_end,
        )

    def _show_example(self) -> None:
        if not isinstance(self.env, ShowsActions):
            raise ValueError(f"starter=True: {type(self.env).__name__} shows no example of its actions (ShowsActions)")
        step = getattr(self.react, "react", None)
        if not isinstance(step, dspy.Predict) or not set(STEP_OUTPUTS) <= set(step.signature.output_fields):
            raise ValueError(
                "starter=True needs dspy.ReAct, whose step predictor writes next_tool_name and next_tool_args"
            )
        step.demos = starter_demos(self.env.action_example(), self.look_tool) + list(step.demos)

    def look(self) -> str:
        """What the agent sees now and the actions admissible now."""
        return self._tools().look()

    def act(self, action: str) -> str:
        """Send one action to the environment. Returns what it answered and the actions admissible now."""
        return self._tools().act(action)

    def _resume_inputs(self, left: int, noted: bool) -> dict[str, Any]:
        """A ReAct call's inputs beyond the task and memory: the `left` steps of the episode and,
        without a look tool, what the agent sees now (after `MISFORMATTED` where `noted`)."""
        inputs: dict[str, Any] = {"max_iters": left}
        if not self.look_tool:
            inputs["observation"] = (MISFORMATTED if noted else "") + self._tools().seen()
        return inputs

    def _tools(self) -> EnvironmentTools:
        if self._episode is None:
            raise RuntimeError("UserReAct's tools are called inside an episode (call the agent with a task_id)")
        return self._episode

    def world(self, task_id: str | TaskRef | None = None, **_: Any) -> str | None:
        """The world that persists the task is played in (a bank keeps one map per world)."""
        return world_of(self.env, TaskRef.parse(task_id)) if task_id else None

    def describe(self, task_id: str | TaskRef) -> str:
        return self.env.describe(task_id)

    def forward(
        self, task: str = "", memory: str = "", task_id: str | None = None, world_map: WorldMap | None = None
    ) -> dspy.Prediction:
        if not task_id:
            raise ValueError("UserReAct needs task_id='<env>/<task_type>/<split>/<variation>' to know what to play")
        self._episode = EnvironmentTools(self.env, task_id, world_map=world_map if self.show_map else None)
        episode = self._episode
        spent = 0  # the steps beside its tool calls: each call's finish and each misformatted step
        answer, stopped, noted = "", None, False
        while (left := self.max_iters - episode.calls - spent) > 0:
            before = episode.calls
            try:
                pred = self.react(task=task or episode.task, memory=memory, **self._resume_inputs(left, noted))
                answer, stopped, spent = getattr(pred, "answer", ""), None, spent + 1
                # With play_to_end, a ReAct that finished before the environment ended the episode
                # goes on from where it stands; one that finished without a step would again.
                if not (self.play_to_end and episode.calls > before and not episode.done):
                    break
                noted = False
            except AdapterParseError as exc:
                answer, stopped = _stopped(exc)
                if not _misformatted_step(exc):  # the final answer's: the episode was over
                    break
                spent += 1  # a misformatted step: go on from where the episode stands
                # Where it failed on a fresh call's first step, a greedy model called again with the
                # same inputs writes the same step: the agent given what it sees is told once what
                # a step is; else the episode ends.
                if episode.calls == before and (self.look_tool or noted):
                    break
                noted = episode.calls == before
            except Exception as exc:  # an LM that misbehaves ends the episode as it stands, never the run
                raise_if_setup_error(exc)  # one that is missing or unusable does end it
                answer, stopped = _stopped(exc)
                break
        trajectory = episode.trajectory()
        if stopped:  # why the episode ended early, for the records (not shown to a judge)
            trajectory.metadata[STOPPED] = stopped[:STOPPED_CHARS]
        self._episode = None
        return dspy.Prediction(answer=answer, trajectory=trajectory)
