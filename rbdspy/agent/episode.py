"""Episode: the state and bookkeeping of one EnvAgent episode: what the agent has seen, tried and
been offered, its steps recorded, the prompt's inputs built from them, and the trajectory out.

Kept apart from `EnvAgent` (env_agent.py), which decides each step and calls the LM: an `Episode`
only keeps the record of one episode, shared by the sync and async loops. `StepEvent` (what an
`on_step` watcher is told), `clean_action` and `stop_summary` are here because an episode makes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import dspy

from rbdspy.agent.action_choice import choice_among, choose_admissible, is_template
from rbdspy.agent.agent_loop import (
    EXPLORE_AFTER,
    focus_order,
    repeat_note,
    state_key,
    status_line,
    status_of,
    task_action,
)
from rbdspy.agent.answer_check import (
    ANSWER_THRESHOLD,
    SCAN_MOST,
    SCAN_THRESHOLD,
    answer_question,
    asked_for_text,
    yes_probability,
)
from rbdspy.core.lm_errors import raise_if_setup_error
from rbdspy.core.logprobs import with_logprobs
from rbdspy.core.plan import Blocking, Call, Plan
from rbdspy.core.roles import AGENT_ROLE, ENV_ROLE, ERROR_ROLE
from rbdspy.core.text import clip
from rbdspy.envs.base import (
    ActionLanguage,
    Environment,
    StepResult,
    TaskRef,
    observation_note,
    trajectory_metadata,
    whereabouts_note,
)
from rbdspy.maps.suggester import MapSuggester
from rbdspy.maps.words import admissible_form
from rbdspy.types import Experience, Step, Trajectory

OBSERVATION_CHARS = 1500  # the current observation (a ScienceWorld room is ~800 characters)
HISTORY_OBSERVATION_CHARS = 300  # each observation inside the history window
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
    action memory suggested at this step (`EnvAgent(suggest=True)`), None when it suggested none.
    """

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


class Episode:
    """The bookkeeping of one episode, shared by the sync and async loops."""

    # `agent` is the EnvAgent that plays the episode (env_agent.py imports this module, so it is
    # not imported here: the package has no import cycles).
    def __init__(self, agent: dspy.Module, ref: TaskRef, task: str, memory: str, experience: list[Experience]):
        self.agent, self.ref, self.memory, self.experience = agent, ref, memory or "", experience
        self.aids = agent.aids_for(ref)
        # How the environment words its actions and tasks, for the task focus; an environment of
        # one's own may not say, and then nothing is known of its words.
        self.language: ActionLanguage = getattr(agent.env, "language", ActionLanguage())
        self.task = task
        self.prompt_task = task
        self.steps: list[Step] = []
        self.window: list[tuple[str, str]] = []
        self.observation = ""
        self.admissible: list[str] = []
        self.actions = self.invalid = self.errors = self.reasked = self.replaced = self.unlisted_reasked = 0
        self.done = False
        self.visited: list[str] = []  # places in the order first come to (the status line's)
        self.last_left: list[str] = []  # the same places, the one the agent was in longest ago first
        self.passed = 0  # visited places the way out has led through since the LM last acted
        self.tried: set[tuple] = set()
        self.status: dict[str, str] | None = None
        self.suggester: MapSuggester | None = None
        self.suggested: str | None = None  # the memory's suggestion in the last prompt, if any
        self.suggested_why: dict | None = None  # why the map offered it (`rbdspy.maps.Why`)
        self.followed = False  # whether the last action was the map's step, taken without an LM call
        self.explored = False  # whether the last action was the environment's way out (`explore`)
        self.steps_here = 0  # actions played since the agent last came to another place
        self.whereabouts = None  # where the environment said the agent is, with its last observation
        self.offered: list[str] = []  # the admissible actions in the last prompt, in its order
        self.declined: set[str] = set()  # answers the agent's check said do not fit (lower case)
        self.asked_for: str | None = None  # what the task asks for, as the LM said (answer check)
        self.checks: list[dict[str, Any]] = []  # each answer check: the action, P(yes), kept
        self.scanned: set[str] = set()  # places whose listed answers the `scan` aid asked about
        self.answered = False  # whether an action that gives the task's answer was played
        self.scan_pick = False  # whether the last action was the scan's pick, taken without the LM

    def start(self, first) -> None:
        # The environment's own description is what the agent must do; the caller's `task`
        # (used for retrieval) is shown too when it says something else.
        description = first.task_description.strip()
        if description and self.task.strip() and description != self.task.strip():
            self.prompt_task = f"{description}\n(Task as given: {self.task.strip()})"
        elif description:
            self.prompt_task = description
        self.task = self.task or description
        if self.aids.suggest:  # the map's way to what the environment's own description names
            self.suggester = self.agent.suggester_for(
                self.ref, description or self.task, first.whereabouts, self.experience
            )
        self.observation, self.admissible = first.text, first.admissible
        self.place = first.whereabouts.place if first.whereabouts else None
        self.whereabouts = first.whereabouts
        self.steps.append(Step(role=ENV_ROLE, content=first.text, metadata=whereabouts_note(first.whereabouts)))
        self.note_status()

    def note_status(self) -> None:
        """Reads where the agent is now (for the status line and the repeat guard)."""
        if not (self.aids.status_line or self.aids.repeat_guard or self.aids.explore):
            return
        self.status = status_of(self.agent.env, self.whereabouts)
        room = (self.status or {}).get("location")
        if room and room not in self.visited:
            self.visited.append(room)
        if room:
            self.last_left = [place for place in self.last_left if place != room] + [room]

    @property
    def passing(self) -> bool:
        """Whether the way out just led back to a visited place, so the agent goes on at once;
        at most as many times in a row as it has visited places, then the LM chooses again."""
        return 0 < self.passed <= len(self.visited)

    def state(self) -> tuple:
        return state_key(self.status, self.observation)

    def unlisted(self, action: str) -> bool:
        """Whether `action` is outside a list of every action the environment understands now
        (`listed_only`; a list with templates holds only some, so nothing is outside it)."""
        listed = self.admissible
        if not (self.aids.listed_only and listed) or any(is_template(a) for a in listed):
            return False
        return action.lower() not in {a.lower() for a in listed}

    def repeats(self, action: str) -> bool:
        """Whether `action` was already played from the state the agent is in (repeat guard)."""
        return self.aids.repeat_guard and (self.state(), action.lower()) in self.tried

    def answer_in(self, action: str) -> str | None:
        """The thing `action` gives as the task's answer, as the environment says (None: none)."""
        answer_in = getattr(self.agent.env, "answer_in", None)
        return answer_in(action) if callable(answer_in) else None

    def confirmed(self, action: str) -> Plan:
        """The answer check (`confirm`, rbdspy/agent/answer_check.py): whether the thing `action`
        answers with is what the task asks for. An LM that cannot say leaves the action as chosen
        (the check is an aid, and a failing LM never turns into a decision). An answer the
        environment vouched for before (`MapSuggester.vouched`) is kept unasked: the world's score
        outranks a small LM's yes or no (the 1.5B model's P(yes) for the right animal of a
        lifespan task was below that for an axe). One it refuted (`MapSuggester.refuted`: every
        episode of the kind that gave it lost it) is declined unasked, for the same reason: the
        1.5B model kept the orange as a living thing (P(yes) 0.38), and the task ended there."""
        if self.suggester is not None and self.suggester.vouched(action):
            self.checks.append({"action": action, "vouched": True, "kept": True})
            return True
        if self.suggester is not None and self.suggester.refuted(action):
            self.checks.append({"action": action, "refuted": True, "kept": False})
            self.declined.add(action.lower())
            return False
        asked = yield from self.yes_to(action)
        if asked is None:
            return True
        question, p = asked
        kept = p is None or p >= ANSWER_THRESHOLD
        self.checks.append({"action": action, "question": question, "p_yes": p, "kept": kept})
        if not kept:
            self.declined.add(action.lower())
        return kept

    def yes_to(self, action: str) -> Plan:
        """(question, P(yes)) for the answer `action` gives, asked as the check asks (P(yes) None
        where the LM wrote neither yes nor no); None where the LM failed or says the task asks
        for nothing."""
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

    def scan_step(self) -> Plan:
        """The `scan` aid's pick: in a place not scanned yet, before the episode has given an answer,
        the listed answer with the highest P(yes), where that reaches `SCAN_THRESHOLD`; else None
        (the map's step or the LM's choice stands). Each answer asked about is in the record's
        answer checks."""
        place = self.place
        if not (self.aids.scan and self.aids.confirm) or self.answered or place is None or place in self.scanned:
            return None
        # Only with memory, and only for a kind of task it holds no confirmed answer to, or where
        # such an answer was found before and is not here now: where no past episode is there to
        # refute a wrong pick, the 1.5B model's best guess ended dev tasks (the kitchen's potato as
        # "a plant", P(yes) 0.705); where one confirmed an answer, the map leads to it.
        suggester = self.suggester
        if suggester is None or not suggester.map.episodes:
            return None
        if suggester.knows_answer() and not suggester.answer_missing():
            return None
        self.scanned.add(place)
        listed = self.admissible[: self.agent.max_admissible]
        answers = [
            a
            for a in listed
            if self.answer_in(a)
            and not is_template(a)
            and a.lower() not in self.declined
            and not self.repeats(a)
            and not suggester.refuted(a)
        ]
        best: tuple[float, str] | None = None
        for action in answers[:SCAN_MOST]:
            asked = yield from self.yes_to(action)
            if asked is None:
                return None  # an LM that cannot say picks nothing
            question, p = asked
            self.checks.append({"action": action, "question": question, "p_yes": p, "scan": True})
            if p is not None and (best is None or p > best[0]):
                best = (p, action)
        if best is None or best[0] < SCAN_THRESHOLD:
            return None
        self.suggested, self.suggested_why, self.scan_pick, self.followed = None, None, True, False
        return best[1]

    def insisted(self, action: str) -> str:
        """The action the repeat guard plays after its second ask: the agent's, unless it repeats
        again and, with `focus`, an admissible action does what the task says; then that one
        (calibration: holding the cashew, with "eat cashew" named and first, the agent answered
        "take cashew" to every prompt). Only the task's own action replaces a repeat, never a
        suggestion from memory: memory stays data."""
        if not (self.aids.focus and self.repeats(action)):
            return action
        done_by = task_action(self.admissible[: self.agent.max_admissible], self.prompt_task, self.language)
        if done_by is None:
            return action
        self.replaced += 1
        return done_by

    def ask_again(self, struck: str, inputs: dict[str, str]) -> Plan:
        """The repeat guard's second ask, answered among the listed actions other than `struck`
        (`choice_among`): asked freely, a small LM wrote the struck action again and again
        (ScienceWorld: "move orange to ground" 12 times over). An LM that answers outside the
        list anyway (one that ignores the constraint) insists; one that cannot answer under it (an
        error that is not a setup mistake) is asked as before and may insist. Returns (prediction,
        action to play)."""
        # A forced choice never gives the task's answer (the LM did not choose to commit), and
        # never one already tried from here: asked again and again, it moves down the list.
        options = [a for a in self.offered if self.answer_in(a) is None and not self.repeats(a)]
        chooser = choice_among(self.agent.act, options)
        if chooser is not None:
            try:
                pred = yield Call(chooser, inputs)
            except Exception as exc:
                raise_if_setup_error(exc)
            else:
                action = self.action_from(pred)
                listed = any(action.lower() == a.lower() for a in options)
                return pred, action if listed else self.insisted(action)
        pred = yield Call(self.agent.act, inputs)
        return pred, self.insisted(self.action_from(pred))

    def way_step(self) -> str | None:
        """The map's next step, taken without asking the LM for an action: with `follow` when it
        is on the way to another place, with `handle` also when it does with a thing what a past
        task of this kind did (an answer among them still goes through the answer check, which
        keeps unasked one the environment vouched for); only where the task's own action is not
        listed and the step was not played from here before; else None (the LM chooses)."""
        if not (self.aids.follow and self.suggester is not None):
            return None
        admissible = [a for a in self.admissible[: self.agent.max_admissible] if a.lower() not in self.declined]
        if self.aids.focus and task_action(admissible, self.prompt_task, self.language):
            return None
        step, on_the_way, learned = self.suggester.next_step(admissible)
        if step is None or self.repeats(step):
            return None
        answers = self.answer_in(step) is not None
        # Only what an episode did is taken, never the map's guess; an answer memory offers only
        # where the answer check will ask about it first.
        handled = self.aids.handle and learned and (not answers or self.aids.confirm)
        if not ((on_the_way and not answers) or handled):
            return None
        self.suggested, self.followed = step, True
        self.suggested_why = self.why()
        return step

    def why(self) -> dict | None:
        """Why the map offered its last step, as data for the episode's record."""
        why = self.suggester.why if self.suggester is not None else None
        return why.to_dict() if why is not None else None

    def explore_step(self) -> Plan:
        """The environment's way out to a place not visited this episode (`explore`), after
        `EXPLORE_AFTER` actions in one place where the map offers nothing, as the admissible list
        writes it; None otherwise, or where the environment cannot say. From a place whose every
        way leads somewhere visited it leads back to the place left longest ago, and on through
        such places at once, so a dead end does not end the exploring."""
        way_out = getattr(self.agent.env, "way_out", None)
        waited = self.steps_here >= EXPLORE_AFTER or self.passing
        if not (self.aids.explore and waited and callable(way_out)):
            return None
        if self.suggester is not None and self.suggester.suggest(self.admissible) is not None:
            return None  # memory has a step here: the LM is shown it
        step = yield Blocking(way_out, (list(self.last_left),))
        if not step:
            return None
        action = admissible_form(step, self.admissible) or step
        if self.repeats(action) or self.answer_in(action):
            return None
        self.suggested, self.suggested_why, self.explored = None, None, True
        return action

    def inputs(self, struck: str | None = None, note: str | None = None) -> dict[str, str]:
        window = self.window[-self.agent.history_window :] if self.agent.history_window > 0 else []
        history = "\n".join(f"> {a}\n{clip(o, HISTORY_OBSERVATION_CHARS, collapse=False)}" for a, o in window)
        history = history or "(no actions yet)"
        observation = clip(self.observation, OBSERVATION_CHARS, collapse=False)
        line = status_line(self.status, self.visited) if self.aids.status_line else ""
        admissible = [a for a in self.admissible[: self.agent.max_admissible] if a.lower() not in self.declined]
        if self.aids.focus:
            admissible = focus_order(
                admissible, self.prompt_task, answers=self.answer_in, plain_verbs=self.language.plain_verbs
            )
        if struck is not None:  # the repeat guard's (or the answer check's) second ask
            history = f"{history}\n{note or repeat_note(struck)}"
            admissible = [a for a in admissible if a.lower() != struck.lower()]
        first, note, self.suggested, self.suggested_why = None, "", None, None
        if self.aids.focus and (first := task_action(admissible, self.prompt_task, self.language)):
            note = f"[This action does what the task says: {first}]"
        elif self.suggester is not None and (first := self.suggester.suggest(admissible)):
            note, self.suggested, self.suggested_why = f"[Memory suggests: {first}]", first, self.why()
        if first is not None:
            admissible = [first] + [a for a in admissible if a != first]
            line = f"{line}\n{note}" if line else note
        self.offered = admissible
        return {
            "task": self.prompt_task,
            "memory": self.memory if self.aids.show_memory else "",
            "history": history,
            "observation": f"{line}\n{observation}" if line else observation,
            "admissible_actions": "\n".join(admissible) or "(not available)",
        }

    def action_from(self, pred: dspy.Prediction) -> str:
        return clean_action(getattr(pred, "action", ""), self.admissible)

    def record(self, action: str, result: StepResult, reasoning: str | None = None) -> None:
        self.actions += 1
        self.invalid += 0 if result.valid else 1
        meta = {"reasoning": reasoning} if reasoning else {}
        if self.suggested is not None:  # what memory offered at this step (the agent may not have played it)
            meta["suggested"] = self.suggested
            if self.suggested_why is not None:
                meta["suggested_why"] = self.suggested_why
        if self.followed:  # the map's step, taken without an LM call
            meta["followed"] = True
            self.followed = False
        explored, self.explored = self.explored, False
        if explored:  # the environment's way out, taken without an LM call
            meta["explored"] = True
        if self.scan_pick:  # the answer the check liked best here, taken without an LM call
            meta["scanned"] = True
            self.scan_pick = False
        self.answered = self.answered or self.answer_in(action) is not None
        if self.aids.repeat_guard:
            self.tried.add((self.state(), action.lower()))
        if self.suggester is not None:
            self.suggester.played_from(action, result.valid, result.whereabouts, result.score)
        self.steps.append(Step(role=AGENT_ROLE, content=action, metadata=meta))
        note = observation_note(self.agent.env, action, result, self.place)
        self.steps.append(Step(role=ENV_ROLE, content=result.observation, metadata=note))
        moved = result.whereabouts is not None and result.whereabouts.place != self.place
        self.steps_here = 0 if moved else self.steps_here + 1
        if moved or not explored:
            # Back through visited places at most as many times as there are, so a world walked
            # through leaves the LM to choose again.
            back = explored and moved and result.whereabouts.place in self.visited
            self.passed = self.passed + 1 if back else 0
        self.place = result.whereabouts.place if result.whereabouts else self.place
        self.whereabouts = result.whereabouts
        self.window.append((action, result.observation))
        self.observation, self.admissible, self.done = result.observation, result.admissible, result.done
        self.note_status()

    def record_error(self, index: int, exc: BaseException) -> None:
        """An LM that misbehaves wastes the step; one that is missing or unusable ends the run."""
        raise_if_setup_error(exc)
        self.errors += 1
        message = clip(f"LM error: {type(exc).__name__}: {exc}", 500, collapse=False)
        self.steps.append(Step(role=ERROR_ROLE, content=message, metadata={"step": index}))
        self.window.append(("(no action: the model failed to answer)", ""))

    def report(self, index: int, action: str | None = None, result: StepResult | None = None) -> None:
        """Tells the agent's `on_step` hook (if any) about step `index`, just recorded."""
        hook = self.agent.on_step
        if hook is None:
            return
        common = {"task_id": self.ref.id, "step": index + 1, "max_steps": self.agent.max_steps}
        if result is None:  # an LM error: the last step recorded holds its message
            hook(StepEvent(**common, action=None, error=self.steps[-1].content))
        else:
            hook(
                StepEvent(
                    **common,
                    action=action,
                    observation=result.observation,
                    valid=result.valid,
                    done=result.done,
                    score=result.score,
                    suggested=self.suggested,
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
                **({"repeats_reasked": self.reasked} if self.aids.repeat_guard else {}),
                **({"unlisted_reasked": self.unlisted_reasked} if self.aids.listed_only else {}),
                **({"repeats_replaced": self.replaced} if self.aids.repeat_guard and self.aids.focus else {}),
                **({"answers_declined": len(self.declined), "answer_checks": self.checks} if self.aids.confirm else {}),
                max_steps=self.agent.max_steps,
                stopped="done" if self.done else "max_steps",
            ),
        )
        return dspy.Prediction(answer=summary, trajectory=trajectory)
