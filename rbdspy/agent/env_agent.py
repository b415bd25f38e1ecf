"""EnvAgent: plays one environment task with the step policies it is built from, and returns a
ground-truth labelled trajectory, in the shape ReasoningBank expects.

    agent = EnvAgent(ScienceWorld(), max_steps=30)                 # the default policies
    agent = EnvAgent(env, policies=[FollowMap(), LMChoice()])     # or your own, in order
    bank = rbdspy.ReasoningBank(agent=agent, store=store, trust_outcome=True)
    tid = "scienceworld/boil/train/3"
    bank(task=agent.describe(tid), task_id=tid)

Each step the proposing policies are asked in order (`rbdspy.agent.policies`: the map's step, the
answer scan, a way out, the LM's choice) and the first choice every reviewing policy keeps (the
listed-only rule, the repeat guard, the answer check) is played; the LM is asked again when a
reviewer strikes its choice. `task` is the natural-language description (what the bank retrieves
memory for); `task_id` says which environment instance to play. The LM's prompt stays ~1-2k tokens
however long the episode runs: the task, a window of recent steps, the observation and a capped list.

Robustness is the point: an action the environment does not understand is recorded (its refusal
is the observation) and the episode goes on; an LM call that raises is recorded as an `error` step
and wastes the step; the loop stops when the environment says done or at `max_steps`. The
trajectory's `outcome` is the environment's verdict. One environment plays one episode at a time:
copies of the agent made by optimizers share it (a live handle, never deep-copied) and take turns
on its episode lock. `on_step` (optional) is told each step as it happens (a `StepEvent`); it only
watches.
"""

from __future__ import annotations

import copy
import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

import dspy

from rbdspy.agent.episode import Episode, StepEvent
from rbdspy.agent.policies.base import Choice, Proposes, Reviews
from rbdspy.agent.policies.lm_choice import LMChoice
from rbdspy.agent.policies.presets import DEFAULT_POLICIES, ByWorld
from rbdspy.core.plan import Blocking, Plan, arun, run
from rbdspy.envs.base import Environment, TaskRef, world_of
from rbdspy.maps.world_map import WorldMap
from rbdspy.signatures.act import NextAction
from rbdspy.signatures.confirm import AskedFor, YesOrNo
from rbdspy.types import Experience, situation_text

DEFAULT_MAX_STEPS = 30
DEFAULT_HISTORY_WINDOW = 6
MAX_ADMISSIBLE_SHOWN = 70
_LOCKS_GUARD = threading.Lock()
log = logging.getLogger(__name__)
_SLOTTED_LOCKS: dict[int, threading.Lock] = {}

StepHook = Callable[[StepEvent], None]
Policies = Sequence[Any]


class _SharedHook:
    """Holds an `on_step` hook so that copies of the agent share it: optimizers deep-copy the
    program per candidate, and a display (a console, a progress bar) is one thing, not a copy each."""

    __slots__ = ("hook",)

    def __init__(self, hook: StepHook):
        self.hook = hook

    def __deepcopy__(self, memo):
        return self


def episode_lock(env: Environment) -> threading.Lock:
    """One lock per environment object, shared by every agent (and agent copy) that plays it."""
    with _LOCKS_GUARD:
        lock = getattr(env, "_rbdspy_episode_lock", None)
        if lock is None:
            lock = threading.Lock()
            try:
                env._rbdspy_episode_lock = lock  # type: ignore[attr-defined]
            except AttributeError:  # an env with __slots__: keep its lock here instead
                lock = _SLOTTED_LOCKS.setdefault(id(env), lock)
        return lock


def _checked(policies: Policies | ByWorld) -> tuple[Any, ...] | ByWorld:
    if isinstance(policies, ByWorld):
        return ByWorld(_checked(policies.persistent), _checked(policies.elsewhere))
    if isinstance(policies, (str, bytes)) or not isinstance(policies, Sequence):
        raise TypeError(f"policies must be a sequence of step policies or a ByWorld; got {type(policies).__name__}")
    policies = tuple(policies)
    for policy in policies:
        if not isinstance(policy, (Proposes, Reviews)):
            raise TypeError(
                f"a step policy has propose(episode) or review(episode, choice) (rbdspy.agent.policies); "
                f"got {type(policy).__name__}"
            )
    if not any(isinstance(p, LMChoice) for p in policies):
        raise ValueError("the policies need an LMChoice (last): it chooses where no other policy does")
    return policies


class EnvAgent(dspy.Module):
    """Plays `task_id` in `env` and returns `Prediction(answer=<summary>, trajectory=<Trajectory
    with ground-truth outcome>)`.

    Args:
        env: an `Environment` (ScienceWorld, TextWorldExpress...). Shared, never copied.
        max_steps: step budget (LM errors count as steps).
        history_window: how many recent steps the prompt shows (0: none).
        max_admissible: how many admissible actions the prompt shows.
        reasoning: use ChainOfThought (a thought before each action) instead of Predict.
        on_step: called with a `StepEvent` after each step, in the thread that plays the episode.
            It only watches: what it returns is ignored, and what it raises ends the episode.
        policies: the step policies, in order (`rbdspy.agent.policies`), the same on every task, or
            a `ByWorld` (chosen per task). The default, `DEFAULT_POLICIES`: `WORLD_POLICIES` on a
            task in a world that persists (the environment's `world_of` names one), the plain LM
            (`PLAIN_POLICIES`, the memory block in its prompt) elsewhere.
    """

    def __init__(
        self,
        env: Environment,
        max_steps: int = DEFAULT_MAX_STEPS,
        history_window: int = DEFAULT_HISTORY_WINDOW,
        max_admissible: int = MAX_ADMISSIBLE_SHOWN,
        reasoning: bool = False,
        on_step: StepHook | None = None,
        policies: Policies | ByWorld = DEFAULT_POLICIES,
    ):
        super().__init__()
        if max_steps < 1:
            raise ValueError(f"max_steps must be at least 1; got {max_steps}")
        if history_window < 0:
            raise ValueError(f"history_window must be 0 or more; got {history_window}")
        self.env = env
        self.max_steps = max_steps
        self.history_window = history_window
        self.max_admissible = max_admissible
        self.act = dspy.ChainOfThought(NextAction) if reasoning else dspy.Predict(NextAction)
        self.asked_for = dspy.Predict(AskedFor)
        self.confirm = dspy.Predict(YesOrNo)
        self.on_step = on_step
        self.policies = _checked(policies)
        self._said_placeless = False

    def policies_for(self, task_id: str | TaskRef) -> tuple[Any, ...]:
        """The step policies an episode of `task_id` plays with."""
        if isinstance(self.policies, ByWorld):
            return self.policies.for_task(persistent=self.world(task_id) is not None)
        return self.policies

    @property
    def on_step(self) -> StepHook | None:
        """The hook told about each step (None: nobody is watching)."""
        shared = self.__dict__.get("_on_step")
        return shared.hook if shared is not None else None

    @on_step.setter
    def on_step(self, hook: StepHook | None) -> None:
        if hook is not None and not callable(hook):
            raise TypeError(f"on_step must be a callable taking a StepEvent, or None; got {type(hook).__name__}")
        self._on_step = _SharedHook(hook) if hook is not None else None

    def describe(self, task_id: str | TaskRef) -> str:
        """The task's description text, for `bank(task=agent.describe(tid), task_id=tid)`."""
        with episode_lock(self.env):
            return self.env.describe(task_id)

    def situation(self, task: str = "", task_id: str | TaskRef | None = None, **_: Any) -> str:
        """What the bank retrieves by: the task plus the episode's first observation. The
        trajectory records the same text, so lessons are stored under the situation they were
        learned in."""
        ref = self._ref(task_id)
        with episode_lock(self.env):
            first = self.env.reset(ref, admissible=False)
        return situation_text(task or first.task_description, first.text)

    def with_policies(self, policies: Policies | ByWorld) -> EnvAgent:
        """This agent (same environment, budget, predictors and hook) with other step policies."""
        other = copy.copy(self)
        other.policies = _checked(policies)
        return other

    def reads_lessons(self, task_id: str | TaskRef | None = None, **_: Any) -> bool:
        """Whether the memory block is in the LM's prompt for `task_id`: where it is not, memory
        reaches the agent only as the map's steps, and a bank writes no lessons for it."""
        return any(isinstance(p, LMChoice) and p.prompt.memory for p in self.policies_for(self._ref(task_id)))

    def world(self, task_id: str | TaskRef | None = None, **_: Any) -> str | None:
        """The world that persists `task_id` is played in ("textworld/1"; the environment's
        `world_of`), None where its tasks share no world. A bank keeps one map per world."""
        return world_of(self.env, self._ref(task_id))

    def _ref(self, task_id: str | TaskRef | None) -> TaskRef:
        if task_id is None or task_id == "":
            raise ValueError(
                "EnvAgent needs task_id='<env>/<task_type>/<split>/<variation>' (e.g. 'scienceworld/boil/train/3') "
                "to know which environment instance to play; get the task text with agent.describe(task_id)"
            )
        return TaskRef.parse(task_id) if isinstance(task_id, str) else task_id

    def _map(self, ref: TaskRef, world_map: WorldMap | None, experience: list[Experience] | None) -> WorldMap | None:
        """The map the episode follows: the bank's map of the task's world, else one learned from
        the experiences served (a caller of its own); None where the task is in no world."""
        world = world_of(self.env, ref)
        if world is None:
            return None
        if world_map is not None:
            return world_map
        return WorldMap(world, experience or ()) if experience else None

    def _plan(
        self,
        task: str,
        memory: str,
        task_id: str | None,
        experience: list[Experience] | None,
        world_map: WorldMap | None,
    ) -> Plan:
        """One episode. Environment calls block (py4j round trips, ~100 ms for ScienceWorld's
        admissible list), so they are Blocking requests: an async caller runs them in a worker
        thread and its event loop keeps serving other episodes."""
        ref = self._ref(task_id)
        policies = self.policies_for(ref)
        lock = episode_lock(self.env)
        yield Blocking(lock.acquire)
        try:
            episode = Episode(self, ref, task, memory, self._map(ref, world_map, experience))
            episode.start((yield Blocking(self.env.reset, (ref,))))
            if episode.world is not None and episode.guide is None and not self._said_placeless:
                log.warning("%s names no place or types no action: no map is followed", self.env.name)
                self._said_placeless = True
            for index in range(self.max_steps):
                try:
                    choice = yield from self._choose(episode, policies)
                except Exception as exc:  # an LM failure wastes the step, never the episode
                    episode.record_error(index, exc)
                    episode.report(index)
                    continue
                result = yield Blocking(self.env.step, (choice.action,))
                episode.record(choice, result)
                episode.report(index, choice, result)
                if episode.done:
                    break
            return episode.result(self.env)
        finally:
            lock.release()

    def _choose(self, episode: Episode, policies: tuple[Any, ...]) -> Plan:
        """The first proposal every reviewer keeps; the LM's, asked again once per reviewer that
        strikes it, is played as it then stands."""
        reviewers = [p for p in policies if isinstance(p, Reviews)]
        for policy in policies:
            if not isinstance(policy, Proposes):
                continue
            choice: Choice | None = yield from policy.propose(episode)
            if choice is None:
                continue
            if isinstance(policy, LMChoice):
                for reviewer in reviewers:
                    note = yield from reviewer.review(episode, choice)
                    if note is not None:
                        name = type(reviewer).__name__
                        episode.struck[name] = episode.struck.get(name, 0) + 1
                        choice = yield from policy.again(episode, choice, note)
                return choice
            kept = True
            for reviewer in reviewers:
                if (yield from reviewer.review(episode, choice)) is not None:
                    kept = False
                    break
            if kept:
                return choice
        raise RuntimeError("no step policy chose an action")  # unreachable: an LMChoice always chooses

    def forward(
        self,
        task: str = "",
        memory: str = "",
        task_id: str | None = None,
        experience: list[Experience] | None = None,
        world_map: WorldMap | None = None,
    ) -> dspy.Prediction:
        return run(self._plan(task, memory, task_id, experience, world_map))

    async def aforward(
        self,
        task: str = "",
        memory: str = "",
        task_id: str | None = None,
        experience: list[Experience] | None = None,
        world_map: WorldMap | None = None,
    ) -> dspy.Prediction:
        return await arun(self._plan(task, memory, task_id, experience, world_map))


__all__ = ["DEFAULT_MAX_STEPS", "EnvAgent", "StepEvent", "episode_lock"]
