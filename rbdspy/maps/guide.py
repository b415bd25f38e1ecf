"""The next step a world's map offers one episode, and why.

The past episodes of this kind of task are procedures (`rbdspy.maps.procedure`); the guide follows
each of them alongside the episode (a step played that is a procedure's next step, or one a few
steps on, moves that procedure on) and asks each for its next step, its things said for this task:
the task's own things (`slots.said_for`), this episode's answer (or, before it gave one, an answer
the environment confirmed for the kind that is in view here), the same fixed things (a step with
one only where `CONFIRMED_BY` past episodes agree on it, as every step of an episode whose task
differs from this one in words its slots do not hold: "renewable" and "nonrenewable" power
sources are not the same procedure). A step is done where its things are: here where they are in
view or in hand (under the name taking them gave, where that differs), in the place the task names
where the past task named its place, else where the map saw the thing the task varies (nowhere,
where it was seen in several places: movable things move between tasks), else where the past
episode did it. Where that is elsewhere, the step is the first of the way there (what was done to
the way first, then the move). The guide offers a step only where every procedure that offers one
offers the same, and only as one of the actions listed now: where it cannot tell, it offers
nothing.

Where the world holds no procedure of the kind and the environment's tasks are imperatives (one
action does what the task says), the guide leads to the things the task names in its order: to
where each was seen, taking it where it is in view and this world's things were taken so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from rbdspy.core.words import says, words_of
from rbdspy.envs.actions import find_listed, same_act, same_thing
from rbdspy.maps.procedure import Procedure, ProcedureStep, holder_of
from rbdspy.maps.slots import said_for, transfers
from rbdspy.maps.why import MAX_LEARNED_FROM, Why
from rbdspy.maps.world_map import Way, WorldMap
from rbdspy.types import Act

# A step played moves a procedure on to it when it is at most this many steps ahead.
LOOKAHEAD = 4
# A step with a fixed thing (one neither the task nor the answer names: the thermometer) is offered
# only where this many past episodes of the kind do it next: one episode cannot tell a thing every
# task of the kind needs from one its own variation happened to need (flower pot 6, inclined plane b).
CONFIRMED_BY = 2

Listed = Sequence[tuple[Act | None, str]]


@dataclass(frozen=True)
class Offer:
    """A step offered: the listed action to play (`text`), typed (`act`), `why`; `on_the_way`: a
    move or an act on a way, not something done with a thing; `answers`: it gives the answer."""

    text: str
    act: Act
    why: Why
    on_the_way: bool = False
    answers: bool = False
    fixed: bool = False  # the step it is (or leads to) does something to a thing no slot names


class Guide:
    """Follows one episode of `task` (of `kind`) on `world` and offers its next step (`offer`).

    `answer_of` is the environment's reading of an act that gives the task's answer (the thing it
    answers with, else None); `imperative`: the environment's tasks are one action each."""

    def __init__(
        self,
        world: WorldMap,
        task: str,
        kind: str | None,
        place: str | None,
        in_view: Sequence[str] = (),
        carrying: Sequence[str] = (),
        imperative: bool = False,
        answer_of: Callable[[Act], str | None] | None = None,
        confirmed_by: int = CONFIRMED_BY,
        inside: Mapping[str, str] | None = None,
    ):
        self.map, self.task, self.kind = world, task, kind
        self.confirmed_by = confirmed_by
        self.place, self.in_view, self.carrying = place, list(in_view), list(carrying)
        self.inside: dict[str, str] = dict(inside or {})  # what held each thing, as last said this episode
        self.imperative = imperative
        self.answer_of = answer_of or (lambda _act: None)
        self.procedures: list[Procedure] = world.kind_procedures(kind)
        self.at = [0] * len(self.procedures)
        self.transfers = [transfers(p, task) for p in self.procedures]
        self.done: list[Act] = []
        self.since_arrival: list[Act] = []
        self.answer: str | None = None
        self.declined: list[str] = []
        self.renamed: dict[str, str] = {}  # a thing put in hand under another name -> the name taken

    # ---- following the episode -----------------------------------------------------------------

    def played(
        self,
        act: Act,
        accepted: bool,
        place: str | None,
        in_view: Sequence[str] = (),
        carrying: Sequence[str] = (),
        inside: Mapping[str, str] | None = None,
    ) -> None:
        """What the agent did, and where it is now, what is in view there, what it carries and
        (where the environment says) what holds what."""
        self.inside.update(inside or {})
        if accepted:
            answered = self.answer_of(act)
            if answered and self.answer is None:
                self.answer = answered
            gained = [c for c in carrying if c not in self.carrying]
            if len(gained) == 1 and act.args and not any(same_thing(gained[0], a) for a in act.args):
                self.renamed[gained[0]] = act.args[0]  # "pick up blue jay": a blue jay egg in hand
            self.done.append(act)
            for n, procedure in enumerate(self.procedures):
                ahead = range(self.at[n], min(len(procedure.steps), self.at[n] + LOOKAHEAD))
                hit = next((j for j in ahead if same_act(self._filled(procedure, procedure.steps[j]), act)), None)
                if hit is not None:
                    self.at[n] = hit + 1
        moved = bool(place) and place != self.place
        if moved:
            self.since_arrival = []
        elif accepted and act.on_way:
            self.since_arrival.append(act)
        self.place = place or self.place
        self.in_view, self.carrying = list(in_view), list(carrying)

    def decline(self, thing: str) -> None:
        """The agent's answer check said `thing` is not the answer: never offered as one."""
        self.declined.append(thing)

    # ---- offering ------------------------------------------------------------------------------

    def offer(self, listed: Listed) -> Offer | None:
        """The next step, as one of `listed` (`(typed, text)` pairs) writes it; None where the
        map cannot tell (see the module docstring)."""
        if not self.place:
            return None
        if not self.procedures:
            return self._named(listed) if self.imperative else None
        offers = [o for n in range(len(self.procedures)) if (o := self._from(n, listed)) is not None]
        if not offers or any(o.text != offers[0].text for o in offers):
            return None
        if any(o.fixed for o in offers) and len(offers) < self.confirmed_by:
            return None
        learned = tuple(dict.fromkeys(t for o in offers for t in o.why.learned_in))[:MAX_LEARNED_FROM]
        return replace(offers[0], why=replace(offers[0].why, learned_in=learned, agreed=len(offers)))

    def _from(self, n: int, listed: Listed) -> Offer | None:
        """Procedure `n`'s next step from here."""
        procedure = self.procedures[n]
        if self.at[n] >= len(procedure.steps):
            return None
        step = procedure.steps[self.at[n]]
        act = self._filled(procedure, step)
        if act is None:
            return None
        goal = self._place_for(procedure, self.at[n], act)
        target = next((a for a, slot in zip(act.args, step.slots, strict=True) if slot != "fixed"), None)
        fixed = "fixed" in step.slots or not self.transfers[n]
        if goal is None:
            return None
        if goal != self.place:
            way = self._toward(goal, listed, target, procedure.task)
            return replace(way, fixed=fixed) if way is not None else None
        text = self._listed_renamed(act, listed) or find_listed(act, listed)
        if text is None:
            return None
        why = Why("procedure", self.place, target, (procedure.task,))
        return Offer(text, act, why, answers=step.answers or self.answer_of(act) is not None, fixed=fixed)

    def _filled(self, procedure: Procedure, step: ProcedureStep) -> Act | None:
        """`step`'s act with its things said for this episode; None where one cannot be."""
        args: list[str] = []
        for arg, slot in zip(step.act.args, step.slots, strict=True):
            if slot == "fixed":
                args.append(arg)
            elif slot == "task":
                said = said_for(arg, procedure.task, self.task)
                if said is None:
                    return None
                args.append(said)
            elif slot == "holder":
                holder = holder_of(self.inside, self.answer) if self.answer else None
                if holder is None:
                    return None
                args.append(holder)
            else:
                # Before the episode answers, a past answer here stands in only for the answer itself,
                # which the agent's answer check then asks about; steps before it wait for the answer.
                answer = self.answer or (self.answer_here() if step.answers else None)
                if answer is None:
                    return None
                args.append(answer)
        return step.act.with_args(args)

    def answer_here(self) -> str | None:
        """The one thing in view or in hand the environment confirmed as an answer to this kind,
        none the agent declined; None where none is, or several are (which one this task wants
        cannot be told)."""
        here = [*self.carrying, *self.in_view]
        found: set[str] = set()
        for known in self.map.answers_of(self.kind):
            if any(same_thing(known, d) for d in self.declined):
                continue
            found |= {t for t in here if t.lower() == known.lower()} or {t for t in here if same_thing(t, known)}
        return found.pop() if len(found) == 1 else None

    def _place_for(self, procedure: Procedure, index: int, act: Act) -> str | None:
        """Where `procedure`'s step `index` (as `act`) is done in this episode; None: cannot tell."""
        steps = procedure.steps
        step = steps[index]
        if step.place is None:
            return self.place
        if act.args and all(self._here(a) for a in act.args):
            return self.place
        # A step that names no thing is done where the next step of its place that names one is.
        j = index
        while not steps[j].act.args and j + 1 < len(steps) and steps[j + 1].place == step.place:
            j += 1
        anchor = steps[j]
        if anchor.place_named:
            said = said_for(anchor.place or "", procedure.task, self.task)
            return said if said and said in self.map.places else None
        filled = act if j == index else self._filled(procedure, anchor)
        if filled is not None:
            varied = [a for a, slot in zip(filled.args, anchor.slots, strict=True) if slot != "fixed"]
            for thing in varied:
                if self._held(thing):
                    continue
                if self._here(thing):
                    return self.place
                places = self.map.where(thing)
                if len(places) > 1:
                    return None  # seen in several places: where it is this time cannot be told
                if places:
                    return places[0]
        return anchor.place

    def _toward(self, goal: str, listed: Listed, target: str | None, task: str) -> Offer | None:
        """The first step of the way to `goal`: what was done first to the way where it was shut
        (not again since arriving here), then the move; where neither is listed, an act on a way
        listed here that names `goal`, done as ways were opened before."""
        route = self.map.route(self.place, goal) if self.place else None
        if not route:
            return None
        way = route[0]
        for before in way.before:
            if any(same_act(before, done) for done in self.since_arrival):
                continue
            text = find_listed(before, listed)
            if text is not None:
                return Offer(text, before, Why("first", way.target, target, (way.task or task,)), on_the_way=True)
        text = find_listed(way.move, listed)
        if text is not None:
            return Offer(text, way.move, Why("way", way.target, target, (way.task or task,)), on_the_way=True)
        return self._opening(way, listed, target, task)

    def _opening(self, way: Way, listed: Listed, target: str | None, task: str) -> Offer | None:
        openers = {b.template for ways in self.map.ways.values() for w in ways.values() for b in w.before}
        for act, text in listed:
            if act is None or not act.on_way or act.template not in openers:
                continue
            if any(says(arg, way.target) for arg in act.args) and not any(same_act(act, d) for d in self.since_arrival):
                return Offer(text, act, Why("first", way.target, target, (task,)), on_the_way=True)
        return None

    def _named(self, listed: Listed) -> Offer | None:
        """For an imperative task with no procedure of its kind: the things and places it names
        that the map knows, in its order; the first one not in hand (or not reached), taken
        where it is here, else led to."""
        known = [(n, True) for n in self.map.names.values()] + [(p, False) for p in self.map.places]
        named = [(n, thing) for n, thing in known if says(self.task, n)]
        named = [(n, t) for n, t in named if not any(set(words_of(n)) < set(words_of(o)) for o, _ in named)]
        order = words_of(self.task)
        named.sort(key=lambda m: order.index(words_of(m[0])[0]) if words_of(m[0])[0] in order else len(order))
        for name, thing in named:
            if not thing:
                if name != self.place:
                    return self._toward(name, listed, name, self.task)
                continue
            if self._held(name):
                continue
            if self._here(name):
                take = self._take(name, listed)
                if take is not None:
                    return take
                continue
            places = self.map.where(name)
            if places:
                return self._toward(places[0], listed, name, self.task)
        return None

    def _take(self, thing: str, listed: Listed) -> Offer | None:
        for act, text in listed:
            if act is not None and act.args and self.map.taking[act.template] and same_thing(act.args[0], thing):
                return Offer(text, act, Why("hold", self.place, thing))
        return None

    def same(self, a: Act | None, b: Act | None) -> bool:
        """Whether two acts are the same action in this episode: `same_act`, a thing in hand under
        the name taking it gave being the thing taken ("blue jay egg" is the blue jay picked up)."""
        if a is None or b is None or a.template != b.template or len(a.args) != len(b.args):
            return False
        pairs = zip(a.args, b.args, strict=True)
        return all(same_thing(x, y) or any(same_thing(n, y) for n in self._names(x)) for x, y in pairs)

    def _listed_renamed(self, act: Act, listed: Listed) -> str | None:
        """`act` as listed with a thing in hand under the name it got when taken."""
        args = [next((new for new, old in self.renamed.items() if same_thing(old, a)), a) for a in act.args]
        return find_listed(act.with_args(args), listed) if args != list(act.args) else None

    def _names(self, thing: str) -> list[str]:
        return [thing, *(new for new, old in self.renamed.items() if same_thing(old, thing))]

    def _here(self, thing: str) -> bool:
        return any(same_thing(n, t) for n in self._names(thing) for t in (*self.in_view, *self.carrying))

    def _held(self, thing: str) -> bool:
        return any(same_thing(n, t) for n in self._names(thing) for t in self.carrying)
