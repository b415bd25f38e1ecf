"""The environment protocol every adapter speaks, the plumbing adapters share, and `play`.

Why a protocol of our own: ScienceWorld and TextWorld-Express have different method names,
score scales (0-100 vs 0-1), split mechanisms (variations vs seeds+fold) and gold-path APIs. The
agent, the dataset builder and the benchmark only need one small surface: list tasks, reset to a
task, step an action, read the ground-truth outcome, get a gold path. Each adapter maps its
package onto that and nothing else leaks out.

Ground truth lives here, not in an LM: `success` is the environment's own verdict (ScienceWorld
score 100, TextWorld-Express won), so a Trajectory built by `play` carries `outcome` that the
ReasoningBank can trust instead of its judge.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from rbdspy.core.roles import ACT, AGENT_ROLE, ANSWERED, ENV_ROLE, WAY_BACK, WAY_BACK_ACT, WHEREABOUTS
from rbdspy.envs.actions import TypedActions
from rbdspy.envs.capabilities import answer_in, kind_of, way_back, whereabouts_of, world_of
from rbdspy.envs.task_ref import SPLITS, Split, TaskRef
from rbdspy.envs.whereabouts import Whereabouts
from rbdspy.types import Step, Trajectory

# `TaskRef`, `Split`, `SPLITS`, `Whereabouts`, `world_of` and `kind_of` are defined below this module
# (`task_ref`, `whereabouts`, `capabilities`) and imported from here by adapters and callers alike.
T = TypeVar("T")


class Observation(BaseModel):
    """What the agent sees after a reset: the first observation, the task description, the
    admissible actions (a compact, capped list; see each adapter for how it is chosen) and,
    where the environment names places, where the agent is (`whereabouts`)."""

    text: str
    task_description: str
    admissible: list[str] = Field(default_factory=list)
    whereabouts: Whereabouts | None = None


class StepResult(BaseModel):
    """The environment's answer to one action.

    `score` is in the environment's own scale (`Environment.max_score`: 100 for ScienceWorld,
    1 for TextWorld-Express); `won` is the ground-truth success flag; `valid` is False when the
    environment did not understand the action (it is then a wasted step, not an error).
    """

    observation: str
    score: float
    done: bool
    won: bool
    valid: bool = True
    admissible: list[str] = Field(default_factory=list)
    whereabouts: Whereabouts | None = None


class ActionLanguage(BaseModel):
    """How an environment's actions and tasks are worded, as far as the agent's task focus reads
    them (rbdspy/agent/focus.py): the words that name no thing, and whether a task is one
    action the agent can find in the admissible list. Nothing is known by default.

    `plain_verbs`: verbs that begin this environment's actions and, written in a task, say nothing
    about which thing the task is about ("go", "take"). `imperative_tasks`: whether a task is one
    imperative sentence whose verb and things one admissible action can do ("Put the mug in the
    fridge."). `verb_forms`: for an imperative task's verb, the action verbs that do what it asks
    ("put": "put", "insert", "place"); a verb not listed is done by itself only. `looks`: how the
    actions that only look at the world begin ("look around", "examine "): dropping one from a
    path cannot make a task fail.
    """

    model_config = ConfigDict(frozen=True)

    plain_verbs: frozenset[str] = frozenset()
    imperative_tasks: bool = False
    verb_forms: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    looks: tuple[str, ...] = ()


@runtime_checkable
class Environment(Protocol):
    """A text environment with automatic scoring. One episode at a time per instance."""

    name: str
    max_score: float
    language: ActionLanguage

    def task_types(self) -> list[str]: ...

    def tasks(
        self, split: Split, task_types: Sequence[str] | None = None, limit: int | None = None
    ) -> list[TaskRef]: ...

    def reset(self, task: TaskRef | str, *, admissible: bool = True) -> Observation: ...

    def step(self, action: str, *, admissible: bool = True) -> StepResult: ...

    def admissible_actions(self) -> list[str]: ...

    def gold_path(self, task: TaskRef | str) -> list[str]: ...

    def describe(self, task: TaskRef | str) -> str: ...

    @property
    def success(self) -> bool: ...

    @property
    def score(self) -> float: ...

    def close(self) -> None: ...


class EnvironmentBase:
    """Shared plumbing for adapters: task-id checking, split and task-type checks, context
    manager, and copy semantics (an adapter is a live handle that copies share).

    It defines none of the optional hooks (`whereabouts`, `world_of`, `answer_in`, ...): an adapter
    implements those it supports, each a capability of `rbdspy.envs.capabilities`, and its registry
    entry declares the same ones."""

    name: str = ""
    max_score: float = 1.0
    # Which words of the environment's actions and tasks the agent's task focus may read: the
    # general agent knows no game's verbs, each adapter states its own.
    language: ActionLanguage = ActionLanguage()

    # Every adapter keeps `_current` (the task being played) and `_descriptions` (a cache by task
    # id). The TextWorld-Express and ScienceWorld adapters wrap a simulator on the JVM: `_env` (its
    # Python wrapper) and `_server` (the py4j gateway object); the TextWorld adapter needs no JVM.

    def _load_for_description(self, ref: TaskRef) -> None:  # pragma: no cover - adapters override
        raise NotImplementedError

    def describe(self, task: TaskRef | str) -> str:
        """The task's natural-language description (cached; a first call loads the task, which
        ends any episode in progress)."""
        ref = self._task(task)
        if ref.id not in self._descriptions:
            self._load_for_description(ref)
            self._current = None
            self._descriptions[ref.id] = str(self._server.getTaskDescription())
        return self._descriptions[ref.id]

    def close(self) -> None:
        env, self._env = getattr(self, "_env", None), None
        if env is not None:
            env.close()
            env.close = lambda: None  # the wrapper's __del__ closes again: make that a no-op

    def _observation(self, text: str, description: str, admissible: bool) -> Observation:
        """What a reset returns, with the admissible actions when asked for."""
        actions = self.admissible_actions() if admissible else []
        return Observation(
            text=text, task_description=description, admissible=actions, whereabouts=whereabouts_of(self)
        )

    def _step_result(self, observation: str, valid: bool, admissible: bool) -> StepResult:
        """What a step returns, read from the adapter's score, done and success after the step."""
        actions = self.admissible_actions() if admissible else []
        return StepResult(
            observation=observation,
            score=self.score,
            done=self.done,
            won=self.success,
            valid=valid,
            admissible=actions,
            whereabouts=whereabouts_of(self),
        )

    def _task(self, task: TaskRef | str) -> TaskRef:
        ref = TaskRef.parse(task) if isinstance(task, str) else task
        if ref.env != self.name:
            raise ValueError(f"task {ref.id!r} belongs to environment {ref.env!r}, not {self.name!r}")
        if ref.task_type not in self.task_types():
            raise ValueError(
                f"task {ref.id!r}: unknown task type {ref.task_type!r}; known: {', '.join(self.task_types())}"
            )
        return ref

    def _check_split(self, split: str) -> Split:
        if split not in SPLITS:
            raise ValueError(f"split must be one of {', '.join(SPLITS)}; got {split!r}")
        return split  # type: ignore[return-value]

    def _check_types(self, task_types: Sequence[str] | None) -> list[str]:
        known = self.task_types()
        if task_types is None:
            return known
        unknown = [t for t in task_types if t not in known]
        if unknown:
            raise ValueError(f"unknown task type(s) {unknown} for {self.name}; known: {', '.join(known)}")
        return list(task_types)

    def task_types(self) -> list[str]:  # pragma: no cover - adapters override
        raise NotImplementedError

    def __deepcopy__(self, memo):
        # A live handle on a simulator process: DSPy optimizers deep-copy the program once per
        # candidate, and every copy must play on this same simulator (taking turns, see EnvAgent).
        return self

    def __copy__(self):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_GAP = object()  # pads the shorter groups in `interleave` (None may be an item)


def interleave(groups: Iterable[Sequence[T]], limit: int | None = None) -> list[T]:
    """One item of each group in turn (the first of every group, then the second of every group
    that has one, ...), at most `limit` in all. Over task types (an environment's task list, the
    demo's and the benchmark's streams) this makes a `limit` keep variety instead of returning
    one task type only."""
    out: list[T] = []
    if limit is not None and limit <= 0:
        return out
    for row in itertools.zip_longest(*groups, fillvalue=_GAP):
        for item in row:
            if item is not _GAP:
                out.append(item)
                if limit is not None and len(out) >= limit:
                    return out
    return out


def actions_of(trajectory: Trajectory) -> list[str]:
    """The actions a trajectory sent to its environment, in order (its "agent" steps)."""
    return [s.content for s in trajectory.steps if s.role == AGENT_ROLE]


def trajectory_metadata(env: Environment, task: TaskRef, n_steps: int, **extra) -> dict:
    world, kind = world_of(env, task), kind_of(env, task)
    return {
        **({"world": world} if world else {}),
        **({"kind": kind} if kind else {}),
        "env": env.name,
        "task_id": task.id,
        "task_type": task.task_type,
        "split": task.split,
        "variation": task.variation,
        "final_score": env.score,
        "max_score": env.max_score,
        "n_steps": n_steps,
        **extra,
    }


def observation_note(env: Environment, action: str, result: StepResult, came_from: str | None) -> dict[str, Any]:
    """What an observation step after `action` notes: the score, whether the environment accepted
    it, where the agent is, the action typed (where the environment types its actions), after a
    move the way back, and after an answer the thing it answered with, as the environment says them."""
    note = {"score": result.score, "valid": result.valid, **whereabouts_note(result.whereabouts)}
    typed = env.parse_action(action) if isinstance(env, TypedActions) else None
    if typed is not None:  # an action the environment cannot read is noted untyped (it was rejected)
        note[ACT] = typed.model_dump()
    where = result.whereabouts
    answered = answer_in(env, action) if where is not None and result.valid else None
    if answered:
        note[ANSWERED] = answered
    if where is not None and came_from and where.place != came_from:
        back = way_back(env, action, came_from)
        if back:
            note[WAY_BACK] = back
            typed_back = env.parse_action(back) if isinstance(env, TypedActions) else None
            if typed_back is not None:
                note[WAY_BACK_ACT] = typed_back.model_dump()
    return note


def whereabouts_note(whereabouts: Whereabouts | None) -> dict[str, Any]:
    """An observation step's note of where the agent is (`place`, `in_view`, `carrying`), the
    typed experience of the episode is read from (`rbdspy.experience`); nothing where the
    environment names no place."""
    return {WHEREABOUTS: whereabouts.model_dump()} if whereabouts is not None else {}


def play(
    env: Environment,
    task: TaskRef | str,
    actions: Sequence[str],
    *,
    stop_at_done: bool = True,
    places: bool = False,
) -> Trajectory:
    """Replays `actions` from a fresh reset of `task` and returns the Trajectory with the
    environment's ground-truth `outcome`.

    Steps alternate role "env" (observations, starting with the initial one) and "agent"
    (actions). With `stop_at_done` the replay stops when the environment says the episode is
    over, so the trajectory holds only the actions that were actually played. With `places`
    each observation notes where the agent is as EnvAgent does (`whereabouts_note`).
    """
    ref = TaskRef.parse(task) if isinstance(task, str) else task
    first = env.reset(ref, admissible=False)
    steps = [Step(role=ENV_ROLE, content=first.text, metadata=whereabouts_note(first.whereabouts) if places else {})]
    place = first.whereabouts.place if first.whereabouts else None
    played = 0
    done = False
    for action in actions:
        if done and stop_at_done:
            break
        result = env.step(action, admissible=False)
        played += 1
        done = result.done
        if places:
            note = observation_note(env, action, result, place)
            place = result.whereabouts.place if result.whereabouts else place
        else:
            note = {"score": result.score, "valid": result.valid}
        steps.append(Step(role=AGENT_ROLE, content=action))
        steps.append(Step(role=ENV_ROLE, content=result.observation, metadata=note))
    return Trajectory(
        task=first.task_description,
        steps=steps,
        # No final answer: the score stays in `metadata` and `outcome`, out of what a judge reads.
        outcome=env.success,
        metadata=trajectory_metadata(env, ref, played),
    )
