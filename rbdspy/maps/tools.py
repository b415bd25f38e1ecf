"""An environment as tools for a user's own agent (`dspy.ReAct`), with the map's next step beside
each observation, and the episode's trajectory for the bank to record.

    class MyAgent(dspy.Module):
        def __init__(self, env):
            super().__init__()
            self.env = env

        def forward(self, task, memory="", task_id=None, experience=None):
            tools = EnvironmentTools(self.env, task_id, experience)
            pred = dspy.ReAct("task, memory -> answer", tools=tools.tools(), max_iters=15)(task=task, memory=memory)
            return dspy.Prediction(answer=pred.answer, trajectory=tools.trajectory())

        def world(self, task_id=None, **_):
            return world_of(self.env, TaskRef.parse(task_id))

A ReasoningBank around `MyAgent` serves it the typed experiences of the task's world (it takes an
`experience` input), records each episode with the places the environment named, and, in a world
that persists, the map is learned from every episode. Memory stays data: what the tool shows is
one of the admissible actions, marked as a suggestion.
"""

from __future__ import annotations

from collections.abc import Iterable

import dspy

from rbdspy.core.roles import AGENT_ROLE, ENV_ROLE
from rbdspy.envs.base import (
    Environment,
    TaskRef,
    kind_of,
    trajectory_metadata,
    whereabouts_note,
    world_of,
)
from rbdspy.maps.suggester import MapSuggester
from rbdspy.maps.world_map import WorldMap
from rbdspy.types import Experience, Step, Trajectory

MAX_LISTED = 40  # admissible actions shown in a tool's answer


class EnvironmentTools:
    """One episode of `task_id` in `env`, played through `act` (and `look`), offering the next
    step of the map learned from `experience` beside each observation."""

    def __init__(self, env: Environment, task_id: str | TaskRef, experience: Iterable[Experience] | None = None):
        self.env = env
        self.ref = TaskRef.parse(task_id) if isinstance(task_id, str) else task_id
        first = env.reset(self.ref)
        self.task = first.task_description
        self.admissible = list(first.admissible)
        self.steps = [Step(role=ENV_ROLE, content=first.text, metadata=whereabouts_note(first.whereabouts))]
        self.actions = 0
        where = first.whereabouts
        world = WorldMap(experience or [], world=world_of(env, self.ref))
        self.suggester = (
            MapSuggester(world, self.task, where.place, where.in_view, where.carrying, kind=kind_of(env, self.ref))
            if where is not None
            else None
        )
        self.first = first.text
        self.offered: dict = {}  # the step last shown as memory's suggestion, and why (for the record)

    def _answer(self, observation: str) -> str:
        listed = "; ".join(self.admissible[:MAX_LISTED]) or "(not listed)"
        suggested = self.suggester.suggest(self.admissible) if self.suggester is not None else None
        why = self.suggester.why if suggested else None
        self.offered = {"suggested": suggested, "suggested_why": why.to_dict()} if why else {}
        hint = f"\nMemory suggests: {suggested} ({why.text()})" if why else ""
        return f"{observation}\nAdmissible actions: {listed}{hint}"

    def look(self) -> str:
        """What the agent saw first in this episode, the actions admissible now and the step memory
        suggests (if any)."""
        return self._answer(self.first)

    def act(self, action: str) -> str:
        """Send one action to the environment. Returns what it answered, the actions admissible now
        and the step memory suggests (if any)."""
        result = self.env.step(action)
        self.actions += 1
        self.admissible = list(result.admissible)
        where = result.whereabouts
        if self.suggester is not None:
            self.suggester.played_from(action, result.valid, where)
        self.steps.append(Step(role=AGENT_ROLE, content=action, metadata=self.offered))
        meta = {"score": result.score, "valid": result.valid, **whereabouts_note(where)}
        self.steps.append(Step(role=ENV_ROLE, content=result.observation, metadata=meta))
        return self._answer(result.observation)

    def tools(self) -> list[dspy.Tool]:
        return [dspy.Tool(self.look), dspy.Tool(self.act)]

    def trajectory(self) -> Trajectory:
        """The episode so far, with the environment's outcome and the world it was played in."""
        return Trajectory(
            task=self.task,
            steps=list(self.steps),
            outcome=self.env.success,
            metadata=trajectory_metadata(self.env, self.ref, self.actions),
        )
