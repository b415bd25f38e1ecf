"""A user's own agent: DSPy's `dspy.ReAct` over the tools a user would write for an environment.

    agent = UserReAct(env, max_iters=15)                  # dspy.ReAct, look and act tools
    agent = UserReAct(env, react=dspy.ReActV2)            # the same with DSPy's next ReAct
    bank = rbdspy.ReasoningBank(agent=agent, store=store)
    bank(task=env.describe(tid), task_id=tid)

None of `EnvAgent`'s techniques: no step policies, no answer check, no repeat guard. The ReAct reads
the task and the memory block a bank serves (`memory`) and calls `look()` and `act(action)`
(`rbdspy.maps.EnvironmentTools`, which record the episode's trajectory with the places the
environment named and its actions typed). With `show_map`, the tools also name the step the map of
the task's world offers beside each observation, when a bank hands the agent that map
(`world_map`): memory as a suggestion in the tool's answer, never an instruction.

Only DSPy's public API is used (`react(signature, tools=..., max_iters=...)`, the prediction's
output fields), so the same agent runs on `dspy.ReAct` and `dspy.ReActV2`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import dspy

from rbdspy.core.lm_errors import raise_if_setup_error
from rbdspy.envs.base import Environment, TaskRef, world_of
from rbdspy.maps.tools import EnvironmentTools
from rbdspy.maps.world_map import WorldMap

SIGNATURE = "task, memory -> answer"
DEFAULT_MAX_ITERS = 15


class UserReAct(dspy.Module):
    """`react` (a ReAct class: `dspy.ReAct`, `dspy.ReActV2`) over `env`'s tools, one episode per
    call; `show_map`: the tools name the map's step where a bank hands one."""

    def __init__(
        self,
        env: Environment,
        max_iters: int = DEFAULT_MAX_ITERS,
        react: Callable[..., dspy.Module] = dspy.ReAct,
        show_map: bool = False,
    ):
        super().__init__()
        if max_iters < 1:
            raise ValueError(f"max_iters must be at least 1; got {max_iters}")
        self.env, self.max_iters, self.show_map = env, max_iters, show_map
        self._episode: EnvironmentTools | None = None
        self.react = react(SIGNATURE, tools=[self.look, self.act], max_iters=max_iters)

    def look(self) -> str:
        """What the agent saw first in this episode and the actions admissible now."""
        return self._tools().look()

    def act(self, action: str) -> str:
        """Send one action to the environment. Returns what it answered and the actions admissible now."""
        return self._tools().act(action)

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
        try:
            pred = self.react(task=task or self._episode.task, memory=memory)
            answer = getattr(pred, "answer", "")
        except Exception as exc:  # an LM that misbehaves ends the episode as it stands, never the run
            raise_if_setup_error(exc)  # one that is missing or unusable does end it
            answer = f"The agent stopped: {type(exc).__name__}"
        trajectory = self._episode.trajectory()
        self._episode = None
        return dspy.Prediction(answer=answer, trajectory=trajectory)
