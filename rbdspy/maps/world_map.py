"""The map of one world that persists, learned from every episode played in it.

What it holds, all read from the typed actions, places and things the environment's adapter named
(`rbdspy.types.Experience`):

- ways between places: the move that led from one place to another, with what was done to the way
  first in that place (a door opened), counted over episodes, so ways compose across episodes, and
  the way back where the environment names it (assumed until an episode takes it);
- where each thing was seen, counted over episodes (where an episode first saw it: where the agent
  left a thing it carried says nothing of where the world keeps it);
- procedures: each episode as the steps the next task of its kind can do again
  (`rbdspy.maps.procedure`);
- how things are taken: the templates of the acts after which the thing they name was in hand;
- answers: what each kind of task was answered with, and whether the environment confirmed it (the
  score rose on it, or the episode won) or refuted it (every episode that gave it lost it).

It is updated one episode at a time (`add`), so a bank keeps one map per world and adds each episode
as it is stored (`rbdspy.maps.world_maps`). Nothing here knows a game's words.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from rbdspy.envs.actions import same_thing
from rbdspy.maps.procedure import Procedure, procedure_of, step_act
from rbdspy.types import Act, Experience, ExperienceStep

# At most this many procedures of one kind are followed at once: the most recent. A world's history
# grows without end; a kind's recent episodes say what its tasks ask now.
MAX_PROCEDURES = 8


@dataclass
class Way:
    """A way from `source` to `target`: the `move`, after the acts `before` done to the way where
    it was not yet open; `uses`: how many episodes took it; `task`: the first that did."""

    source: str
    target: str
    move: Act
    before: tuple[Act, ...] = ()
    uses: int = 1
    task: str = ""
    assumed: bool = False  # the way back the environment named, not yet taken by any episode


@dataclass
class Answers:
    """What one kind of task was answered with: per thing, how often the environment confirmed it
    and how often an episode that gave it lost."""

    confirmed: Counter[str] = field(default_factory=Counter)
    lost: Counter[str] = field(default_factory=Counter)


def _moved(step: ExperienceStep) -> bool:
    return step.accepted and bool(step.place) and bool(step.arrived) and step.place != step.arrived


class WorldMap:
    """The map of `world` (every experience given, when None), learned one episode at a time."""

    def __init__(self, world: str | None = None, experiences: Iterable[Experience] = ()):
        self.world = world
        self.ways: dict[str, dict[str, Way]] = {}
        self.seen: dict[str, Counter[str]] = {}
        self.names: dict[str, str] = {}  # a thing's lower-case name -> as the environment wrote it
        self.places: set[str] = set()
        self.procedures: dict[str | None, list[Procedure]] = {}
        self.answers: dict[str | None, Answers] = {}
        self.taking: Counter[str] = Counter()  # template -> how often it put the thing it names in hand
        self.episodes = 0
        for experience in experiences:
            self.add(experience)

    # ---- learning ------------------------------------------------------------------------------

    def add(self, experience: Experience) -> bool:
        """Learns from one episode of this map's world; False (nothing learned) for another's."""
        if self.world is not None and experience.world != self.world:
            return False
        self.episodes += 1
        self._learn_ways(experience)
        self._learn_sightings(experience)
        self._learn_answers(experience)
        procedure = procedure_of(experience)
        if procedure is not None:
            kept = self.procedures.setdefault(experience.kind, [])
            kept.append(procedure)
            del kept[: max(0, len(kept) - 4 * MAX_PROCEDURES)]
        return True

    def _learn_ways(self, experience: Experience) -> None:
        since_arrival: list[Act] = []
        for step in experience.steps:
            for place in (step.place, step.arrived):
                if place:
                    self.places.add(place)
            act = step_act(step)
            if _moved(step):
                self._learn_way(step.place, step.arrived, act, tuple(since_arrival), experience.task)
                if step.way_back_act is not None:
                    self._learn_way(step.arrived, step.place, step.way_back_act, (), experience.task, assumed=True)
                since_arrival = []
            elif step.accepted and act.on_way:
                since_arrival.append(act)
        if experience.start:
            self.places.add(experience.start)

    def _learn_way(
        self, source: str, target: str, move: Act, before: tuple[Act, ...], task: str, assumed: bool = False
    ) -> None:
        """Keeps a way, counting its uses; one taken replaces one only assumed (the way back)."""
        known = self.ways.setdefault(source, {}).get(target)
        if known is None or (known.assumed and not assumed):
            self.ways[source][target] = Way(source, target, move, before, task=task, assumed=assumed)
            return
        if assumed:
            return
        known.uses += 1
        if not known.before and before:  # one episode found the way open, this one opened it
            known.before = before

    def _learn_sightings(self, experience: Experience) -> None:
        before = list(experience.carrying)
        for step in experience.steps:
            act = step_act(step)
            new = [c for c in step.carrying if c not in before]
            if step.accepted and act.args and any(same_thing(act.args[0], c) for c in new):
                self.taking[act.template] += 1
            before = list(step.carrying)
        held = {c.lower() for c in experience.carrying}
        seen: set[tuple[str, str]] = set()
        if experience.start:
            seen |= {(t, experience.start) for t in experience.in_view}
        for step in experience.steps:
            held |= {c.lower() for c in step.carrying}
            if step.arrived:
                seen |= {(t, step.arrived) for t in step.in_view if t.lower() not in held}
        for thing, place in seen:
            self.seen.setdefault(thing.lower(), Counter())[place] += 1
            self.names.setdefault(thing.lower(), thing)

    def _learn_answers(self, experience: Experience) -> None:
        best = 0.0
        for step in experience.steps:
            scored = step.score is not None and step.score > best
            if step.score is not None:
                best = max(best, step.score)
            if not (step.answered and step.accepted):
                continue
            answers = self.answers.setdefault(experience.kind, Answers())
            if scored or experience.won:
                answers.confirmed[step.answered.lower()] += 1
            elif experience.won is False:
                answers.lost[step.answered.lower()] += 1

    # ---- reading -------------------------------------------------------------------------------

    def where(self, thing: str) -> list[str]:
        """The places `thing` was seen, the place more episodes saw it in first: by its own name,
        or, where it was never seen so, by a name that is the same thing (`same_thing`)."""
        counts = self.seen.get(thing.lower())
        if counts is None:
            counts = Counter()
            for seen, places in self.seen.items():
                if same_thing(seen, thing):
                    counts.update(places)
        return [place for place, _ in counts.most_common()]

    def kind_procedures(self, kind: str | None) -> list[Procedure]:
        """The most recent procedures of `kind` (won ones first), at most `MAX_PROCEDURES`."""
        recent = list(reversed(self.procedures.get(kind, [])))
        return (sorted(recent, key=lambda p: not p.won))[:MAX_PROCEDURES]

    def confirmed(self, kind: str | None, thing: str) -> bool:
        """Whether the environment confirmed `thing` as an answer to `kind` and never refuted it."""
        answers = self.answers.get(kind)
        return (
            answers is not None
            and any(same_thing(t, thing) for t in answers.confirmed)
            and not self.refuted(kind, thing)
        )

    def refuted(self, kind: str | None, thing: str) -> bool:
        """Whether every episode of `kind` that answered with `thing` lost it."""
        answers = self.answers.get(kind)
        if answers is None:
            return False
        lost = any(same_thing(t, thing) for t in answers.lost)
        return lost and not any(same_thing(t, thing) for t in answers.confirmed)

    def answers_of(self, kind: str | None) -> list[str]:
        """The answers the environment confirmed for `kind`, most often confirmed first."""
        answers = self.answers.get(kind)
        return [t for t, _ in answers.confirmed.most_common()] if answers is not None else []

    def route(self, source: str, goal: str) -> list[Way] | None:
        """The fewest ways from `source` to `goal` ([] when already there; among as few, the ways
        more episodes took), None when the map knows none."""
        if source == goal:
            return []
        # Dijkstra over hops, a way taken by more episodes a little shorter than one taken by fewer.
        frontier: list[tuple[float, int, str]] = [(0.0, 0, source)]
        best: dict[str, float] = {source: 0.0}
        came: dict[str, Way] = {}
        order = 0
        while frontier:
            cost, _, place = heapq.heappop(frontier)
            if place == goal:
                path = [came[goal]]
                while path[0].source != source:
                    path.insert(0, came[path[0].source])
                return path
            if cost > best.get(place, float("inf")):
                continue
            for target, way in self.ways.get(place, {}).items():
                step = cost + 1.0 + 0.01 / (1 + way.uses)
                if step < best.get(target, float("inf")):
                    best[target], came[target] = step, way
                    order += 1
                    heapq.heappush(frontier, (step, order, target))
        return None
