"""EnvAgent: a ReAct-style agent that plays one environment task and returns a ground-truth
labelled trajectory, in the shape ReasoningBank expects.

    agent = EnvAgent(ScienceWorld(), max_steps=30)
    bank = rbdspy.ReasoningBank(agent=agent, store=store, trust_outcome=True)
    tid = "scienceworld/boil/train/3"
    bank(task=agent.describe(tid), task_id=tid)

`task` is the natural-language description (what the bank retrieves memory for); `task_id` says
which environment instance to play. Each step one `dspy.Predict(NextAction)` call sees the task,
the memory block, a window of recent steps, the current observation and a capped admissible list,
so a prompt stays ~1-2k tokens however long the episode runs.

Robustness is the point: an action the environment does not understand is recorded (its "No
known action" / "Unknown action" reply is the observation) and the episode goes on; an LM call
that raises is recorded as an `error` step and counts as a wasted step; the loop stops when the
environment says done or at `max_steps`. The trajectory's `outcome` is the environment's verdict.

One environment plays one episode at a time: copies of the agent made by optimizers share the
environment (it is a live handle, never deep-copied) and take turns on its episode lock.

`on_step` (optional) is told each step as it happens, a `StepEvent`, so a caller can show the
agent playing (`rbdspy demo` prints one line per step). It only watches: the prompts and the LM
calls are the same with or without it.

One episode's state and bookkeeping (what the agent has seen, tried and been offered, its
steps and trajectory) is `Episode`, in episode.py; `EnvAgent` decides each step and calls the LM.
"""

from __future__ import annotations

import copy
import logging
import threading
from collections.abc import Callable
from typing import Any

import dspy

from rbdspy.agent.agent_loop import DEFAULT_AIDS, Aids, AidsByWorld, aids_for, declined_note, unlisted_note
from rbdspy.agent.episode import Episode, StepEvent
from rbdspy.core.plan import Blocking, Call, Plan, arun, run
from rbdspy.envs.base import Environment, TaskRef, Whereabouts, kind_of, world_of
from rbdspy.maps.suggester import MapSuggester
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


class EnvAgent(dspy.Module):
    """Plays `task_id` in `env` with one LM call per step and returns
    `Prediction(answer=<summary>, trajectory=<Trajectory with ground-truth outcome>)`.

    Args:
        env: an `Environment` (ScienceWorld, TextWorldExpress...). Shared, never copied.
        max_steps: step budget (LM errors count as steps).
        history_window: how many recent steps the prompt shows (0: none).
        max_admissible: how many admissible actions the prompt shows.
        reasoning: use ChainOfThought (a thought before each action) instead of Predict.
        on_step: called with a `StepEvent` after each step (an action played, or an LM error),
            in the thread that plays the episode. It only watches: what it returns is ignored,
            and what it raises ends the episode. Copies of the agent call the same hook.
        aids: the aids to the agent's loop (`rbdspy.agent.agent_loop`), an `Aids` (the same on
            every task) or an `AidsByWorld` (chosen per task). The default, `DEFAULT_AIDS`: on a
            task in a world that persists (the environment's `world_of` names one) `WORLD_AIDS`,
            elsewhere `NO_AIDS` (the memory block in the prompt). Each aid:
            status_line: show where the agent is, what it carries and the places it has visited
                above the observation (from the environment's `status()` or `whereabouts`).
            repeat_guard: when the agent picks an action it already played from the same state,
                ask once more among the listed actions left (see agent_loop.py).
            suggest: offer the next step on the map of the task's world (learned from the typed
                experiences served as `experience`) towards what the task names, from wherever
                the agent is, first in the admissible list (see rbdspy.maps).
            focus: list the admissible actions that name something the task names first, and the
                one that does what the task says (if admissible) first of all, named above the
                observation.
            show_memory: put the memory block in the prompt. False: memory reaches the agent only
                as suggested actions (with `suggest`), so a small model cannot copy actions from a
                sequence about something else.
            confirm: before an action that gives the task's answer (the environment's
                `answer_in`), ask the LM whether the thing it names is what the task asks for
                (rbdspy/agent/answer_check.py); on a no, strike it for the episode and choose
                among the listed actions left.
            follow: (with `suggest`) take the map's step without an LM call where it is on the way
                to another place (a move, a door opened first); every other action is the LM's.
            listed_only: where the environment lists every action it understands, ask an action
                written outside the list again, as a choice among the listed actions.
            handle: (with `follow`) also take the map's step that does with a thing in view what
                a past task of this kind did with one; an answer only with `confirm`, once the
                answer check keeps it.
            explore: after `EXPLORE_AFTER` actions in one place where the map offers no step,
                take the environment's way out to a place not visited this episode (`way_out`),
                without an LM call.
    """

    def __init__(
        self,
        env: Environment,
        max_steps: int = DEFAULT_MAX_STEPS,
        history_window: int = DEFAULT_HISTORY_WINDOW,
        max_admissible: int = MAX_ADMISSIBLE_SHOWN,
        reasoning: bool = False,
        on_step: StepHook | None = None,
        aids: Aids | AidsByWorld = DEFAULT_AIDS,
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
        if not isinstance(aids, (Aids, AidsByWorld)):
            raise TypeError(f"aids must be an Aids or an AidsByWorld (rbdspy.agent); got {type(aids).__name__}")
        self.aids = aids
        self._said_placeless = False

    def suggester_for(
        self, ref: TaskRef, task: str, where: Whereabouts | None, experience: list[Experience]
    ) -> MapSuggester | None:
        """The map of the task's world learned from `experience`, following this episode from
        where it starts; None where the environment names no place (said once per agent)."""
        if where is None:
            if not self._said_placeless:
                log.warning("%s names no place: no map is learned or followed", self.env.name)
                self._said_placeless = True
            return None
        world = WorldMap(experience, world=world_of(self.env, ref))
        kind = kind_of(self.env, ref)
        return MapSuggester(world, task, where.place, where.in_view, where.carrying, kind=kind)

    def aids_for(self, task_id: str | TaskRef) -> Aids:
        """The aids an episode of `task_id` plays with."""
        return aids_for(self.aids, persistent=self.world(task_id) is not None)

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
        """What the bank retrieves by: the task plus the episode's first observation (a reset,
        milliseconds in TextWorld-Express). The trajectory records the same text, so lessons are
        stored under the situation they were learned in."""
        ref = self._ref(task_id)
        with episode_lock(self.env):
            first = self.env.reset(ref, admissible=False)
        return situation_text(task or first.task_description, first.text)

    def with_aids(self, **changes: bool) -> EnvAgent:
        """This agent (same environment, budget, predictor and hook) with some aids set otherwise
        on every kind of task, e.g. `with_aids(show_memory=True, suggest=False)`: lessons in the
        prompt, no steps offered."""
        other = copy.copy(self)
        other.aids = self.aids.replace(**changes)
        return other

    def reads_lessons(self, task_id: str | TaskRef | None = None, **_: Any) -> bool:
        """Whether the memory block is in the prompt for `task_id` (`show_memory`): where it is
        not, memory reaches the agent only as the map's suggested steps."""
        return bool(self.aids_for(self._ref(task_id)).show_memory)

    def world(self, task_id: str | TaskRef | None = None, **_: Any) -> str | None:
        """The world that persists `task_id` is played in ("textworld/1"; the environment's
        `world_of`), None where its tasks share no world. A bank retrieves for it by world."""
        return world_of(self.env, self._ref(task_id))

    def _ref(self, task_id: str | TaskRef | None) -> TaskRef:
        if task_id is None or task_id == "":
            raise ValueError(
                "EnvAgent needs task_id='<env>/<task_type>/<split>/<variation>' (e.g. 'scienceworld/boil/train/3') "
                "to know which environment instance to play; get the task text with agent.describe(task_id)"
            )
        return TaskRef.parse(task_id) if isinstance(task_id, str) else task_id

    def _plan(self, task: str, memory: str, task_id: str | None, experience: list[Experience] | None) -> Plan:
        """One episode. Environment calls block (py4j round trips, ~100 ms for ScienceWorld's
        admissible list), so they are Blocking requests: an async caller runs them in a worker
        thread and its event loop keeps serving other episodes."""
        ref = self._ref(task_id)
        lock = episode_lock(self.env)
        yield Blocking(lock.acquire)
        try:
            episode = Episode(self, ref, task, memory, list(experience or []))
            episode.start((yield Blocking(self.env.reset, (ref,))))
            for index in range(self.max_steps):
                pred, action = None, episode.way_step()
                # A place the map only passes through is scanned too; an answer of the map's own
                # is the map's to give.
                if action is None or not episode.answer_in(action):
                    action = (yield from episode.scan_step()) or action
                if action is None:
                    action = yield from episode.explore_step()
                try:
                    # The scan's pick was asked about already, and liked best of all in view.
                    checked = not episode.scan_pick and action is not None and episode.aids.confirm
                    checked = checked and episode.answer_in(action)
                    if checked and not (yield from episode.confirmed(action)):
                        action, episode.followed = None, False  # memory's answer declined: the LM chooses
                    if action is None:
                        pred, action = yield from self._choose(episode)
                except Exception as exc:  # an LM failure wastes the step, never the episode
                    episode.record_error(index, exc)
                    episode.report(index)
                    continue
                result = yield Blocking(self.env.step, (action,))
                episode.record(action, result, getattr(pred, "reasoning", None))
                episode.report(index, action, result)
                if episode.done:
                    break
            return episode.result(self.env)
        finally:
            lock.release()

    def _choose(self, episode: Episode) -> Plan:
        """The LM's action for this step, asked again after a repeat or a declined answer: returns
        (prediction, action)."""
        pred = yield Call(self.act, episode.inputs())
        action = episode.action_from(pred)
        if episode.unlisted(action):
            episode.unlisted_reasked += 1
            inputs = episode.inputs(struck=action, note=unlisted_note(action))
            pred, action = yield from episode.ask_again(action, inputs)
        if episode.repeats(action):
            episode.reasked += 1
            inputs = episode.inputs(struck=action)
            pred, action = yield from episode.ask_again(action, inputs)
        checked = episode.aids.confirm and episode.answer_in(action)
        if checked and not (yield from episode.confirmed(action)):
            inputs = episode.inputs(struck=action, note=declined_note(action))
            pred, action = yield from episode.ask_again(action, inputs)
        return pred, action

    def forward(
        self, task: str = "", memory: str = "", task_id: str | None = None, experience: list[Experience] | None = None
    ) -> dspy.Prediction:
        return run(self._plan(task, memory, task_id, experience))

    async def aforward(
        self, task: str = "", memory: str = "", task_id: str | None = None, experience: list[Experience] | None = None
    ) -> dspy.Prediction:
        return await arun(self._plan(task, memory, task_id, experience))
