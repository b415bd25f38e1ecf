"""A past episode as a procedure with slots: what the next task of its kind can do again.

A won episode's actions, typed, less its moves and what it did to ways (the map plans those from
wherever the next episode is), are the steps of a procedure; each thing in a step is a slot:

- "task": the task named it ("water" in "boil water"): the next task says its own (`slots.said_for`);
- "answer": the episode gave it as the task's answer, or it is the thing answered with, or what
  taking that thing put in hand (a kind of task, "find an animal", is satisfied by any of its
  kind): the next episode's own answer;
- "holder": what held the answer when the step was done, where the environment says what holds
  what ("pick up flower pot 8", the pot the apple tree grew in): what holds the next answer;
- "fixed": anything else (the thermometer, the stove), the same thing again.

Each step keeps the place it was done in, and whether the task named that place. An episode that
did not win keeps only the steps the environment's score rose on (each one confirmed as right),
with what it did earlier to the things those steps name: an episode cut short still says what
satisfied part of its task. Acts the environment refused are not steps.

As in Agent Workflow Memory's workflows, the procedure is data with variables; unlike them, the
variables are read off the environment's typed actions and the task's own words, not asked of an LM.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rbdspy.envs.actions import same_thing
from rbdspy.maps.slots import said_in
from rbdspy.types import Act, Experience, ExperienceStep

Slot = Literal["task", "answer", "holder", "fixed"]


@dataclass(frozen=True)
class ProcedureStep:
    """One step: the act as done, what each of its things is (`slots`), where it was done and
    whether the task named that place (`place_named`); `answers`: it gave the task's answer."""

    act: Act
    slots: tuple[Slot, ...]
    place: str | None
    place_named: bool = False
    answers: bool = False
    scored: bool = False  # the environment's score rose on it


@dataclass(frozen=True)
class Procedure:
    """The steps of one episode of `kind` (`won`: the whole episode; else its scored steps)."""

    task: str
    kind: str | None
    steps: tuple[ProcedureStep, ...]
    won: bool
    answer: str | None = None  # what the episode answered with, where it gave an answer


def step_act(step: ExperienceStep) -> Act:
    """The step's typed action; an episode stored before actions were typed keeps its text."""
    return step.act if step.act is not None else Act(template=" ".join(step.action.split()).lower())


def _moved(step: ExperienceStep) -> bool:
    return bool(step.place) and bool(step.arrived) and step.place != step.arrived


def procedure_of(experience: Experience) -> Procedure | None:
    """The procedure `experience` shows (see the module docstring); None where it shows none."""
    answer = next((s.answered for s in experience.steps if s.answered and s.accepted), None)
    answers = _answer_names(experience, answer)
    kept: list[tuple[ExperienceStep, Act, bool]] = []
    holding: dict[int, tuple[str, ...]] = {}  # id of a step -> what held the answer just before it
    before = dict(experience.inside)  # what held what, as last said (a thing taken along still holds)
    best = 0.0
    for step in experience.steps:
        holding[id(step)] = tuple(h for t, h in before.items() if any(same_thing(t, a) for a in answers))
        before.update(step.inside)
        scored = step.score is not None and step.score > best
        if step.score is not None:
            best = max(best, step.score)
        act = step_act(step)
        if not step.accepted or _moved(step) or act.on_way:
            continue
        kept.append((step, act, scored))
    if not experience.won:
        kept = _scored_part(kept)
    if not kept:
        return None
    steps = tuple(_typed(step, act, scored, experience.task, answers, holding[id(step)]) for step, act, scored in kept)
    return Procedure(experience.task, experience.kind, steps, bool(experience.won), answer)


def _scored_part(kept: list[tuple[ExperienceStep, Act, bool]]) -> list[tuple[ExperienceStep, Act, bool]]:
    """Of a lost episode's steps, those the score rose on, with the earlier steps that did
    something to one of their things (what put it in hand, opened it)."""
    scored_at = [i for i, (_, _, scored) in enumerate(kept) if scored]
    if not scored_at:
        return []
    keep: set[int] = set(scored_at)
    for i in scored_at:
        things = kept[i][1].args
        keep |= {j for j in range(i) if any(same_thing(a, t) for a in kept[j][1].args for t in things)}
    return [kept[i] for i in sorted(keep) if i <= scored_at[-1]]


def _answer_names(experience: Experience, answer: str | None) -> tuple[str, ...]:
    """The answer, and what taking it put in hand: an environment may name a thing otherwise once
    held ("pick up blue jay": a blue jay egg in the inventory)."""
    if answer is None:
        return ()
    names = [answer]
    held = list(experience.carrying)
    for step in experience.steps:
        gained = [c for c in step.carrying if c not in held]
        if step.accepted and len(gained) == 1 and any(same_thing(a, answer) for a in step_act(step).args):
            names.append(gained[0])
        held = list(step.carrying)
    return tuple(dict.fromkeys(names))


def holder_of(inside: dict[str, str], answer: str) -> str | None:
    """What holds `answer`, as `inside` (thing -> holder) says."""
    return next((holder for thing, holder in inside.items() if same_thing(thing, answer)), None)


def _typed(
    step: ExperienceStep, act: Act, scored: bool, task: str, answers: tuple[str, ...], holders: tuple[str, ...]
) -> ProcedureStep:
    slots = tuple(_slot(arg, task, answers, holders) for arg in act.args)
    named = bool(step.place) and said_in(task, step.place or "")
    return ProcedureStep(act, slots, step.place, named, answers=bool(step.answered), scored=scored)


def _slot(arg: str, task: str, answers: tuple[str, ...], holders: tuple[str, ...]) -> Slot:
    if said_in(task, arg):
        return "task"
    if any(same_thing(arg, a) for a in answers):
        return "answer"
    if any(same_thing(arg, h) for h in holders):
        return "holder"
    return "fixed"
