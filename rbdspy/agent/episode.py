"""Episode: the state and bookkeeping of one EnvAgent episode: what the agent has seen, tried and
been offered, its steps recorded, and the trajectory out.

Kept apart from `EnvAgent` (env_agent.py), which asks its step policies for each action and plays
it: an `Episode` only keeps the record of one episode, which the policies read (where the agent
is, what it has tried, the map's offer for this step) and the sync and async loops share.
`StepEvent` (what an `on_step` watcher is told), `clean_action` and `stop_summary` are here
because an episode makes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import dspy

from rbdspy.agent.action_choice import choose_admissible, is_template
from rbdspy.agent.answer_check import answer_question, asked_for_text, yes_probability
from rbdspy.agent.policies.base import Choice
from rbdspy.core.lm_errors import raise_if_setup_error
from rbdspy.core.logprobs import with_logprobs
from rbdspy.core.plan import Call, Plan
from rbdspy.core.roles import AGENT_ROLE, ENV_ROLE, ERROR_ROLE
from rbdspy.core.text import clip
from rbdspy.envs.actions import TypedActions, find_listed
from rbdspy.envs.base import (
    ActionLanguage,
    Environment,
    StepResult,
    TaskRef,
    Whereabouts,
    kind_of,
    observation_note,
    trajectory_metadata,
    whereabouts_note,
)
from rbdspy.envs.capabilities import StatusLine, answer_in
from rbdspy.maps.guide import Guide, Offer
from rbdspy.maps.world_map import WorldMap
from rbdspy.types import Act, Step, Trajectory

_PREFIXES = ("action:", "next action:", "> ")


def stop_summary(actions: int, done: bool, max_steps: int) -> str:
    """The final answer of an EnvAgent trajectory: how it stopped, never the score."""
    ending = "the environment ended the episode" if done else f"the step limit ({max_steps}) was reached"
    return f"Stopped after {actions} actions: {ending}."


@dataclass(frozen=True)
class StepEvent:
    """One step of an episode, as `EnvAgent(on_step=...)` reports it right after it happened.

    `step` counts from 1 and includes LM errors (they spend the step budget, `max_steps`).
    On an LM error `action` is None, `error` holds the message and `observation` is empty;
    otherwise `observation` is the environment's full reply (`valid` False when it did not
    understand the action) and `done` says whether the episode ended there. `suggested` is the
    step the world's map offered at this step, None when it offered none; `source` which policy
    chose the action ("lm", "map", "explore", "scan")."""

    task_id: str
    step: int
    max_steps: int
    action: str | None
    observation: str = ""
    valid: bool = True
    done: bool = False
    score: float | None = None
    error: str | None = None
    suggested: str | None = None
    source: str | None = None


def clean_action(raw: Any, admissible: list[str]) -> str:
    """The action an LM meant: its first non-empty line, without quotes, a leading "Action:" or
    a trailing period; then the listed action it means, written as the list writes it (see
    `choose_admissible`: a respelling of a listed action is sent as listed)."""
    text = str(raw or "").strip()
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    lowered = line.lower()
    for prefix in _PREFIXES:
        if lowered.startswith(prefix):
            line = line[len(prefix) :].strip()
            lowered = line.lower()
    line = line.strip("`'\" ").rstrip(".").strip()
    return choose_admissible(line, admissible)


def state_key(status: Whereabouts | None, observation: str) -> tuple[str, ...]:
    """What "the same state" means for the repeat guard: the place and what is carried where the
    environment says them, else the observation."""
    if status and status.place:
        return ("status", status.place, *status.carrying)
    return ("observation", observation.strip())


def status_of(env: Any, whereabouts: Whereabouts | None = None) -> Whereabouts | None:
    """The environment's `status()` (the place, what is carried); where it has none, the
    `whereabouts` it gave with its last observation; None where neither says."""
    value = None
    if isinstance(env, StatusLine):
        try:
            value = env.status()
        except Exception:  # a status is an aid: an environment that cannot say gives no line
            value = None
    if isinstance(value, Whereabouts):
        return value
    if whereabouts is None or not whereabouts.place:
        return None
    return whereabouts


class Episode:
    """The bookkeeping of one episode, shared by the sync and async loops and read by the
    agent's step policies. `world` is the map of the task's world (None: no map is followed)."""

    # `agent` is the EnvAgent that plays the episode (env_agent.py imports this module, so it is
    # not imported here: the package has no import cycles).
    def __init__(self, agent: dspy.Module, ref: TaskRef, task: str, memory: str, world: WorldMap | None):
        self.agent, self.env, self.ref, self.memory, self.world = agent, agent.env, ref, memory or "", world
        # How the environment words its actions and tasks; one of the user's own may not say.
        self.language: ActionLanguage = agent.env.language if isinstance(agent.env, Environment) else ActionLanguage()
        self.typed = isinstance(agent.env, TypedActions)
        self.task = task
        self.prompt_task = task
        self.steps: list[Step] = []
        self.window: list[tuple[str, str]] = []
        self.observation = ""
        self.admissible: list[str] = []
        self.actions = self.invalid = self.errors = self.replaced = 0
        self.struck: dict[str, int] = {}  # per reviewing policy, how many choices it struck
        self.done = False
        self.place: str | None = None
        self.whereabouts = None
        self.status: Whereabouts | None = None
        self.visited: list[str] = []  # places in the order first come to (the status line's)
        self.last_left: list[str] = []  # the same places, the one the agent was in longest ago first
        self.passed = 0  # visited places the way out has led through since the LM last acted
        self.steps_here = 0  # actions played since the agent last came to another place
        self.tried: set[tuple] = set()
        self.guide: Guide | None = None
        self.declined: set[str] = set()  # answers the answer check struck (lower case)
        self.asked_for: str | None = None  # what the task asks for, as the LM said (answer check)
        self.checks: list[dict[str, Any]] = []  # each answer check: the action, P(yes), kept
        self.scanned: set[str] = set()  # places whose listed answers the answer scan asked about
        self.answered = False  # whether an action that gives the task's answer was played
        self.shown: list[str] = []  # the listed actions in the LM's last prompt, in its order
        self.shown_offer: Offer | None = None  # the map's step named in the LM's last prompt
        self._offer: tuple[int, Offer | None] | None = None  # (step, the map's offer for it)

    # ---- the episode's state -------------------------------------------------------------------

    def start(self, first) -> None:
        # The environment's own description is what the agent must do; the caller's `task`
        # (used for retrieval) is shown too when it says something else.
        description = first.task_description.strip()
        if description and self.task.strip() and description != self.task.strip():
            self.prompt_task = f"{description}\n(Task as given: {self.task.strip()})"
        elif description:
            self.prompt_task = description
        self.task = self.task or description
        where = first.whereabouts
        if self.world is not None and where is not None and self.typed:
            self.guide = Guide(
                self.world,
                description or self.task,
                kind_of(self.env, self.ref),
                where.place,
                where.in_view,
                where.carrying,
                imperative=self.language.imperative_tasks,
                answer_of=self._answer_of,
                inside=where.inside,
            )
        self.observation, self.admissible = first.text, first.admissible
        self.place = where.place if where else None
        self.whereabouts = where
        self.steps.append(Step(role=ENV_ROLE, content=first.text, metadata=whereabouts_note(where)))
        self._note_status()

    def _note_status(self) -> None:
        self.status = status_of(self.env, self.whereabouts)
        room = self.status.place if self.status else None
        if room and room not in self.visited:
            self.visited.append(room)
        if room:
            self.last_left = [place for place in self.last_left if place != room] + [room]

    @property
    def passing(self) -> bool:
        """Whether the way out just led back to a visited place, so the agent goes on at once;
        at most as many times in a row as it has visited places."""
        return 0 < self.passed <= len(self.visited)

    def listed(self) -> list[str]:
        """The admissible actions the agent may choose among now (capped; declined answers out)."""
        return [a for a in self.admissible[: self.agent.max_admissible] if a.lower() not in self.declined]

    def typed_act(self, action: str) -> Act | None:
        return self.env.parse_action(action) if self.typed else None

    def as_listed(self, action: str) -> str:
        """`action` as the list writes it, where the list holds it in other words."""
        if self.typed:
            listed = find_listed(
                self.env.parse_action(action), [(self.env.parse_action(a), a) for a in self.admissible]
            )
            if listed is not None:
                return listed
        return action

    def offer(self) -> Offer | None:
        """The world map's step for this step (asked once a step), None where it offers none."""
        if self.guide is None:
            return None
        if self._offer is None or self._offer[0] != self.actions:
            listed = [(self.env.parse_action(a), a) for a in self.listed() if not is_template(a)]
            self._offer = (self.actions, self.guide.offer(listed))
        return self._offer[1]

    def template(self, action: str) -> bool:
        return is_template(action)

    def task_action(self) -> str | None:
        """The listed action that does what an imperative task says (the task focus's)."""
        from rbdspy.agent.focus import task_action  # the focus module reads only words

        return task_action(self.listed(), self.prompt_task, self.language)

    def state(self) -> tuple:
        return state_key(self.status, self.observation)

    def repeats(self, action: str) -> bool:
        """Whether `action` was already played from the state the agent is in."""
        return (self.state(), action.lower()) in self.tried

    def unlisted(self, action: str) -> bool:
        """Whether `action` is outside a list of every action the environment understands now (a
        list with templates holds only some, so nothing is outside it)."""
        listed = self.admissible
        if not listed or any(is_template(a) for a in listed):
            return False
        return action.lower() not in {a.lower() for a in listed}

    def answer_in(self, action: str) -> str | None:
        """The thing `action` gives as the task's answer, as the environment says (None: none)."""
        return answer_in(self.env, action)

    def _answer_of(self, act: Act) -> str | None:
        return self.answer_in(self.env.render_action(act))

    def vouched(self, thing: str) -> bool:
        """Whether the world's map says the environment confirmed `thing` for this kind of task."""
        guide = self.guide
        return guide is not None and guide.kind is not None and guide.map.confirmed(guide.kind, thing)

    def refuted(self, thing: str) -> bool:
        """Whether every past episode of this kind of task that answered `thing` lost."""
        guide = self.guide
        return guide is not None and guide.kind is not None and guide.map.refuted(guide.kind, thing)

    def decline(self, action: str) -> None:
        """The answer check struck `action`: not listed again this episode, never offered."""
        self.declined.add(action.lower())
        thing = self.answer_in(action)
        if self.guide is not None and thing:
            self.guide.decline(thing)

    def yes_to(self, action: str) -> Plan:
        """(question, P(yes)) for the answer `action` gives (P(yes) None where the LM wrote neither
        yes nor no); None where the LM failed or says the task asks for nothing."""
        try:
            if self.asked_for is None:
                pred = yield Call(self.agent.asked_for, {"task": self.prompt_task})
                self.asked_for = asked_for_text(getattr(pred, "asked_for", ""))
            if not self.asked_for:
                return None
            question = answer_question(self.answer_in(action) or action, self.asked_for)
            pred = yield Call(self.agent.confirm, with_logprobs(self.agent.confirm, {"question": question}))
        except Exception as exc:
            raise_if_setup_error(exc)
            return None
        return question, yes_probability(pred)

    def action_from(self, pred: dspy.Prediction) -> str:
        return clean_action(getattr(pred, "action", ""), self.admissible)

    # ---- recording -----------------------------------------------------------------------------

    def record(self, choice: Choice, result: StepResult) -> None:
        action = choice.action
        self.actions += 1
        self.invalid += 0 if result.valid else 1
        meta: dict[str, Any] = {"source": choice.source}
        reasoning = getattr(choice.prediction, "reasoning", None)
        if reasoning:
            meta["reasoning"] = reasoning
        offered = self.shown_offer if choice.source == "lm" else None
        if choice.source == "map":
            meta.update(suggested=action, followed=True)
        elif offered is not None:
            meta["suggested"] = offered.text
        if choice.why is not None:
            meta["suggested_why"] = choice.why
        if choice.source == "explore":
            meta["explored"] = True
        if choice.source == "scan":
            meta["scanned"] = True
        self.answered = self.answered or self.answer_in(action) is not None
        self.tried.add((self.state(), action.lower()))
        act = self.typed_act(action)
        if self.guide is not None and act is not None:
            where = result.whereabouts
            self.guide.played(
                act,
                result.valid,
                where.place if where else None,
                where.in_view if where else (),
                where.carrying if where else (),
                where.inside if where else None,
            )
        self.steps.append(Step(role=AGENT_ROLE, content=action, metadata=meta))
        note = observation_note(self.env, action, result, self.place)
        self.steps.append(Step(role=ENV_ROLE, content=result.observation, metadata=note))
        moved = result.whereabouts is not None and result.whereabouts.place != self.place
        self.steps_here = 0 if moved else self.steps_here + 1
        explored = choice.source == "explore"
        if moved or not explored:
            # Back through visited places at most as many times as there are, so a world walked
            # through leaves the LM to choose again.
            back = explored and moved and result.whereabouts.place in self.visited
            self.passed = self.passed + 1 if back else 0
        self.place = result.whereabouts.place if result.whereabouts else self.place
        self.whereabouts = result.whereabouts
        self.window.append((action, result.observation))
        self.observation, self.admissible, self.done = result.observation, result.admissible, result.done
        self.shown_offer = None
        self._note_status()

    def record_error(self, index: int, exc: BaseException) -> None:
        """An LM that misbehaves wastes the step; one that is missing or unusable ends the run."""
        raise_if_setup_error(exc)
        self.errors += 1
        message = clip(f"LM error: {type(exc).__name__}: {exc}", 500, collapse=False)
        self.steps.append(Step(role=ERROR_ROLE, content=message, metadata={"step": index}))
        self.window.append(("(no action: the model failed to answer)", ""))

    def report(self, index: int, choice: Choice | None = None, result: StepResult | None = None) -> None:
        """Tells the agent's `on_step` hook (if any) about step `index`, just recorded."""
        hook = self.agent.on_step
        if hook is None:
            return
        common = {"task_id": self.ref.id, "step": index + 1, "max_steps": self.agent.max_steps}
        if result is None or choice is None:  # an LM error: the last step recorded holds its message
            hook(StepEvent(**common, action=None, error=self.steps[-1].content))
            return
        suggested = self.steps[-2].metadata.get("suggested")
        hook(
            StepEvent(
                **common,
                action=choice.action,
                observation=result.observation,
                valid=result.valid,
                done=result.done,
                score=result.score,
                suggested=suggested,
                source=choice.source,
            )
        )

    def result(self, env: Environment) -> dspy.Prediction:
        # What the agent itself knows at the end, never the score: the trajectory goes to the
        # bank's judge, which must decide from the observations (the environment's verdict is
        # `outcome` and `metadata["final_score"]`, which the judge does not read).
        summary = stop_summary(self.actions, self.done, self.agent.max_steps)
        trajectory = Trajectory(
            task=self.task,
            steps=self.steps,
            final_answer=summary,
            outcome=env.success,
            metadata=trajectory_metadata(
                env,
                self.ref,
                self.actions,
                invalid_actions=self.invalid,
                lm_errors=self.errors,
                struck=dict(self.struck),
                repeats_replaced=self.replaced,
                answers_declined=len(self.declined),
                answer_checks=self.checks,
                max_steps=self.agent.max_steps,
                stopped="done" if self.done else "max_steps",
            ),
        )
        return dspy.Prediction(answer=summary, trajectory=trajectory)
