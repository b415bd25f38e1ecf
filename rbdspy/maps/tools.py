"""An environment as tools for a user's own agent (`dspy.ReAct`), with the map's next step beside
each observation, and the episode's trajectory for the bank to record.

    class MyAgent(dspy.Module):
        def __init__(self, env):
            super().__init__()
            self.env = env

        def forward(self, task, memory="", task_id=None, world_map=None):
            tools = EnvironmentTools(self.env, task_id, world_map=world_map)
            pred = dspy.ReAct("task, memory -> answer", tools=tools.tools(), max_iters=15)(task=task, memory=memory)
            return dspy.Prediction(answer=pred.answer, trajectory=tools.trajectory())

        def world(self, task_id=None, **_):
            return world_of(self.env, TaskRef.parse(task_id))

A ReasoningBank around `MyAgent` serves it the map of the task's world (it takes a `world_map`
input: the bank keeps one per world, learned from every episode of it stored) and records each
episode with the places the environment named and its actions typed. Memory stays data: what the
tool shows is one of the admissible actions, marked as a suggestion. An agent that takes
`experience` instead is served the typed experiences of the items retrieved, and the map is
learned from those.
"""

from __future__ import annotations

from collections.abc import Iterable

import dspy

from rbdspy.core.roles import AGENT_ROLE, ENV_ROLE
from rbdspy.envs.actions import TypedActions
from rbdspy.envs.base import (
    Environment,
    TaskRef,
    kind_of,
    observation_note,
    trajectory_metadata,
    whereabouts_note,
    world_of,
)
from rbdspy.envs.capabilities import answer_in
from rbdspy.maps.guide import Guide
from rbdspy.maps.world_map import WorldMap
from rbdspy.types import Experience, Step, Trajectory

MAX_LISTED = 40  # admissible actions shown in a tool's answer
UNCHANGED = "Nothing has changed since you last looked: only act changes what you see.\n"


def tool_answer(observation: str, admissible: Iterable[str], hint: str = "") -> str:
    """What `look` and `act` answer: the observation, the actions admissible now and, where memory
    offers a step, that step as a suggestion."""
    listed = "; ".join(list(admissible)[:MAX_LISTED]) or "(not listed)"
    return f"{observation}\nAdmissible actions: {listed}{hint}"


class EnvironmentTools:
    """One episode of `task_id` in `env`, played through `act` (and `look`), offering the next
    step of the map of the task's world (`world_map`, or one learned from `experience`) beside
    each observation."""

    def __init__(
        self,
        env: Environment,
        task_id: str | TaskRef,
        experience: Iterable[Experience] | None = None,
        world_map: WorldMap | None = None,
    ):
        self.env = env
        self.ref = TaskRef.parse(task_id) if isinstance(task_id, str) else task_id
        first = env.reset(self.ref)
        self.task = first.task_description
        self.admissible = list(first.admissible)
        self.steps = [Step(role=ENV_ROLE, content=first.text, metadata=whereabouts_note(first.whereabouts))]
        self.actions = self.rejected = self.looks = 0
        self.done = False  # the environment ended the episode
        self.typed = isinstance(env, TypedActions)
        where = first.whereabouts
        self.place = where.place if where else None
        world = world_of(env, self.ref)
        if world_map is None and world is not None and experience:
            world_map = WorldMap(world, experience)
        self.guide = None
        if world_map is not None and where is not None and self.typed:
            self.guide = Guide(
                world_map,
                self.task,
                kind_of(env, self.ref),
                where.place,
                where.in_view,
                where.carrying,
                imperative=env.language.imperative_tasks,
                answer_of=self._answer_of,
                inside=where.inside,
            )
        self.last = first.text
        self.looked = False  # since the last act
        self.offered: dict = {}  # the step last shown as memory's suggestion, and why (for the record)

    def _answer_of(self, act) -> str | None:
        return answer_in(self.env, self.env.render_action(act))

    def _answer(self, observation: str) -> str:
        offer = None
        if self.guide is not None:
            offer = self.guide.offer([(self.env.parse_action(a), a) for a in self.admissible])
        self.offered = {"suggested": offer.text, "suggested_why": offer.why.to_dict()} if offer else {}
        hint = f"\nMemory suggests: {offer.text} ({offer.why.text()})" if offer else ""
        return tool_answer(observation, self.listed(), hint)

    def listed(self) -> list[str]:
        """The admissible actions the answers list: all but those named as one of these tools (a
        text game's own "look"), which a ReAct would take for the tool and call again and again."""
        tool_names = {tool.__name__ for tool in (self.look, self.act)}  # as tools() names them
        return [a for a in self.admissible if a.strip().lower() not in tool_names]

    @property
    def calls(self) -> int:
        """The tool calls of the episode so far (looks and actions)."""
        return self.actions + self.looks

    def seen(self) -> str:
        """What the agent sees now (the last observation), the actions admissible now and the step
        memory suggests (if any): what `look` answers, for an agent given it as an input."""
        return self._answer(self.last)

    def look(self) -> str:
        """What the agent sees now (the last observation), the actions admissible now and the step
        memory suggests (if any)."""
        again, self.looked = self.looked, True
        self.looks += 1
        # A small ReAct repeats its last tool call; a look that shows nothing new says so.
        return (UNCHANGED if again else "") + self.seen()

    def act(self, action: str) -> str:
        """Send one action to the environment. Returns what it answered, the actions admissible now
        and the step memory suggests (if any)."""
        result = self.env.step(action)
        self.actions += 1
        self.rejected += 0 if result.valid else 1
        self.admissible = list(result.admissible)
        self.done = bool(result.done)
        where = result.whereabouts
        typed = self.env.parse_action(action) if self.typed else None
        if self.guide is not None and typed is not None:
            self.guide.played(
                typed,
                result.valid,
                where.place if where else None,
                where.in_view if where else (),
                where.carrying if where else (),
                where.inside if where else None,
            )
        self.steps.append(Step(role=AGENT_ROLE, content=action, metadata=self.offered))
        note = observation_note(self.env, action, result, self.place)
        self.place = where.place if where else self.place
        self.steps.append(Step(role=ENV_ROLE, content=result.observation, metadata=note))
        self.last, self.looked = result.observation, False
        return self._answer(result.observation)

    def tools(self) -> list[dspy.Tool]:
        return [dspy.Tool(self.look), dspy.Tool(self.act)]

    def trajectory(self) -> Trajectory:
        """The episode so far, with the environment's outcome and the world it was played in."""
        return Trajectory(
            task=self.task,
            steps=list(self.steps),
            outcome=self.env.success,
            # The actions the environment refused, counted as EnvAgent's episodes count them.
            metadata=trajectory_metadata(self.env, self.ref, self.actions, invalid_actions=self.rejected),
        )
