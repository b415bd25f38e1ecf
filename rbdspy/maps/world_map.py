"""A map of one world that persists, learned from typed experiences (`rbdspy.types.Experience`).

What it holds, all read from the places and things the environment named:

- ways between places: the action that led from one place to another, and what was done first
  where it was taken (a door opened), learned from any episode, so ways compose across episodes
  (a thing seen in one quest, reached through a door learned in another);
- where each thing was seen (how many episodes saw it in each place), and the action that put a
  thing in hand;
- what each episode handled: the things it came to carry or gave as the task's answer, where, with
  which action, and whether it won, which tells the map where a kind of thing was found for a task
  like the one at hand and what was done with it;
- where the environment names kinds of task, what an episode put what it held into or onto, when
  its task names that (`Brought`: "move the animal to the red box in the bathroom").

Nothing here knows a game's grammar: a move is an action after which the place changed; a
prerequisite is what was done in that place just before, chosen by the words it shares with the
way out (see `_prerequisites`).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable
from dataclasses import dataclass

from rbdspy.maps.words import gained, names, short_name, task_names, words
from rbdspy.types import Experience, ExperienceStep

# At most this many actions done in a place before leaving it are kept as what the way out needs.
MAX_PREREQUISITES = 3


@dataclass(frozen=True)
class Edge:
    """A way from `source` to `target`: `action`, after `before` where it was not yet possible."""

    source: str
    target: str
    action: str
    before: tuple[str, ...] = ()
    assumed: bool = False  # the way back the environment named, not yet taken by any episode
    task: str = ""  # the task of the episode it was learned in (why a suggestion takes it)


@dataclass(frozen=True)
class Handled:
    """A thing an episode came to carry or gave as the task's answer: in which task, where, by
    which action, and whether the environment confirmed it (`won`: the episode won, or, for an
    answer, the environment's score rose on it: a right answer in an episode lost later still
    says what satisfies the task's kind; `episode_won` says whether the episode itself won)."""

    task: str
    thing: str
    place: str
    won: bool | None
    action: str = ""
    kind: str | None = None  # the episode's kind of task, where the environment names one
    answer: bool = False  # given as the task's answer (not carried)
    episode_won: bool | None = None  # whether the episode won (`won` may be an answer's score)


@dataclass(frozen=True)
class Brought:
    """An action of an episode of a `kind` of task that left something it held with a thing its
    task names (`target`, in view at `place`): which action, in which task, and whether it was
    confirmed (`won`: the episode won, or the environment's score rose on it)."""

    task: str
    kind: str
    target: str
    place: str
    action: str
    won: bool | None


def _moved(step: ExperienceStep) -> bool:
    return step.accepted and bool(step.place) and bool(step.arrived) and step.place != step.arrived


def _prerequisites(experience: Experience, index: int) -> tuple[str, ...]:
    """What the move at `index` needed first: of the accepted actions done in its place just before
    it (since arriving, newest first), the last one unless it put something in hand, then any
    earlier one sharing a word with the move, its destination or an action already kept (an
    "unlock" before an "open" of the same door). In the order they were played."""
    steps = experience.steps
    move = steps[index]
    run: list[int] = []
    for before in range(index - 1, -1, -1):
        step = steps[before]
        if _moved(step) or step.place != move.place:
            break
        if step.accepted:
            run.append(before)
    kept: list[str] = []
    related = set(words(move.action)) | set(words(move.arrived or ""))
    for position, before in enumerate(run[:MAX_PREREQUISITES]):
        step = steps[before]
        held_before = steps[before - 1].carrying if before > 0 else experience.carrying
        if gained(held_before, step.carrying):
            continue
        if position == 0 or words(step.action) & related:
            kept.append(step.action)
            related |= words(step.action)
    return tuple(reversed(kept))


def _among(thing: str, held: set[str]) -> bool:
    return any(names(h, thing) or names(thing, h) for h in held)


class WorldMap:
    """The map of `world` (every experience given, when None) learned from `experiences`."""

    def __init__(self, experiences: Iterable[Experience] = (), world: str | None = None):
        self.world = world
        self.edges: dict[str, dict[str, Edge]] = {}
        # Ways taken between the same two places after what else was done first (a door that an
        # earlier episode found open, a later one opened): tried when the first one's are spent.
        self.other_ways: dict[tuple[str, str], list[Edge]] = {}
        self.sightings: dict[str, Counter[str]] = {}
        self.taken_by: dict[str, str] = {}
        self.taken_in: dict[str, str] = {}  # thing -> the task whose episode first took it
        self.seen_in: dict[tuple[str, str], list[str]] = {}  # (thing, place) -> tasks that saw it there
        self.handled: list[Handled] = []
        self.brought: list[Brought] = []
        self.places: set[str] = set()
        self.episodes = 0
        for experience in experiences:
            self.add(experience)

    def add(self, experience: Experience) -> bool:
        """Learns from one experience of this map's world; False (and nothing learned) for another
        world's. A thing is counted where it was seen before the episode first held it: where the
        agent left it says nothing about where the world keeps it."""
        if self.world is not None and experience.world != self.world:
            return False
        self.episodes += 1
        seen: set[tuple[str, str]] = set()
        held: set[str] = set(experience.carrying)
        if experience.start:
            self.places.add(experience.start)
            seen |= {(t, experience.start) for t in experience.in_view}
        carrying = list(experience.carrying)
        taken_at: dict[str, str] = {}  # what the episode took, and where
        start = len(self.handled)
        best = 0.0  # the episode's highest score so far (scores start at 0)
        for index, step in enumerate(experience.steps):
            mine = self.handled[start:]
            for place in (step.place, step.arrived):
                if place:
                    self.places.add(place)
            if _moved(step):
                before = _prerequisites(experience, index)
                self._learn(Edge(step.place, step.arrived, step.action, before, task=experience.task))
                if step.way_back:
                    self._learn(Edge(step.arrived, step.place, step.way_back, assumed=True, task=experience.task))
            elif step.accepted and step.place:
                # What the episode went on to do there with a thing it handled ("move cup to blue
                # box" after "focus on cup") is part of handling it.
                follow_up = next(
                    (h for h in reversed(mine) if h.place == step.place and names(step.action, h.thing)), None
                )
                new = gained(carrying, step.carrying)
                if follow_up is not None and not new and not step.answered:
                    self.handled.append(
                        Handled(
                            experience.task,
                            follow_up.thing,
                            step.place,
                            experience.won,
                            step.action,
                            experience.kind,
                            episode_won=experience.won,
                        )
                    )
                for thing in new:
                    taken_at.setdefault(thing, step.place)
                    self.taken_by.setdefault(thing, step.action)
                    self.taken_in.setdefault(thing, experience.task)
                    self.handled.append(
                        Handled(
                            experience.task,
                            thing,
                            step.place,
                            experience.won,
                            step.action,
                            experience.kind,
                            episode_won=experience.won,
                        )
                    )
                self._note_brought(experience, step, carrying, step.score is not None and step.score > best)
                if step.answered:
                    scored = step.score is not None and step.score > best
                    # An answer held since it was taken elsewhere was found where it was taken.
                    held_now = {short_name(c) for c in carrying}
                    found = next(
                        (p for t, p in taken_at.items() if short_name(t) in held_now and _among(step.answered, {t})),
                        None,
                    )
                    self.handled.append(
                        Handled(
                            experience.task,
                            step.answered,
                            found or step.place,
                            True if scored else experience.won,
                            step.action,
                            experience.kind,
                            answer=True,
                            episode_won=experience.won,
                        )
                    )
            if step.score is not None:
                best = max(best, step.score)
            held |= set(step.carrying)
            if step.arrived:
                seen |= {(t, step.arrived) for t in step.in_view if not _among(t, held)}
            carrying = list(step.carrying)
        for thing, place in seen:
            self.sightings.setdefault(thing, Counter())[place] += 1
            self.seen_in.setdefault((thing, place), []).append(experience.task)
        return True

    def _note_brought(self, experience: Experience, step: ExperienceStep, held: list[str], scored: bool) -> None:
        """Keeps `step` as a `Brought` where the environment names the kind of task and it left
        something held (`held`: before it) with a thing in view that both it and the task name."""
        if experience.kind is None or step.answered or not gained(step.carrying, held):
            return
        target = next((t for t in step.in_view if names(step.action, t) and task_names(experience.task, t)), None)
        if target is not None:
            won = True if scored else experience.won
            self.brought.append(Brought(experience.task, experience.kind, target, step.place, step.action, won))

    def _learn(self, edge: Edge) -> None:
        """Keeps the first way learned between two places; one taken replaces one only assumed. A
        later episode's way between the same places after something else done first is kept too."""
        known = self.edges.setdefault(edge.source, {}).get(edge.target)
        if known is None or (known.assumed and not edge.assumed):
            self.edges[edge.source][edge.target] = edge
        elif not edge.assumed and edge.before:
            others = self.other_ways.setdefault((edge.source, edge.target), [])
            if all(set(edge.before) - set(way.before) for way in (known, *others)):
                others.append(edge)

    def ways_between(self, edge: Edge) -> list[Edge]:
        """`edge` and the other ways learned between its two places, first learned first."""
        return [edge, *self.other_ways.get((edge.source, edge.target), [])]

    def openings_into(self, edge: Edge) -> list[tuple[str, str]]:
        """What was done first on ways into `edge`'s target from other places, where it says where
        it leads ("open door to hallway", learned leaving the kitchen), with the task it was
        learned in: a way into a place may open so from another side too."""
        found: dict[str, str] = {}
        for source, ways in self.edges.items():
            if source == edge.source or edge.target not in ways:
                continue
            for way in (ways[edge.target], *self.other_ways.get((source, edge.target), [])):
                for step in way.before:
                    if names(step, edge.target):
                        found.setdefault(step, way.task)
        return list(found.items())

    @property
    def things(self) -> set[str]:
        """Every thing the map has seen somewhere or seen carried."""
        return set(self.sightings) | set(self.taken_by)

    def where(self, thing: str) -> list[str]:
        """The places `thing` was seen, the place more episodes saw it in first: under a name that
        names it ("type 7 locker (open)"); only where it was never seen so, under a name it names
        (a "butterfly" for a "butterfly egg"): a plain "locker" seen elsewhere is not the type 7
        locker seen here."""
        counts: Counter[str] = Counter()
        for seen, places in self.sightings.items():
            if names(seen, thing):
                counts.update(places)
        if not counts:
            for seen, places in self.sightings.items():
                if names(thing, seen):
                    counts.update(places)
        return [place for place, _ in counts.most_common()]

    def taking(self, thing: str) -> str | None:
        """The action that once put `thing` (or a thing it names, or that names it) in hand."""
        for carried, action in self.taken_by.items():
            if names(carried, thing) or names(thing, carried):
                return action
        return None

    def taken_in_task(self, thing: str) -> str | None:
        """The task whose episode first did `taking(thing)`."""
        for carried, task in self.taken_in.items():
            if names(carried, thing) or names(thing, carried):
                return task
        return None

    def seen_by(self, thing: str, place: str) -> list[str]:
        """The tasks whose episodes saw `thing` (or a thing it names, or that names it) in `place`."""
        tasks = (
            task
            for (seen, where), found in self.seen_in.items()
            if where == place and (names(seen, thing) or names(thing, seen))
            for task in found
        )
        return list(dict.fromkeys(tasks))

    def taking_like(self, thing: str, admissible: Iterable[str]) -> str | None:
        """An admissible action naming `thing` that starts as the actions which put things in hand
        in this world did ("take ...", "pick up ..."): how to take a thing no episode took yet."""
        verbs = {action.split()[0].lower() for action in self.taken_by.values() if action.split()}
        return next((a for a in admissible if a.split() and a.split()[0].lower() in verbs and names(a, thing)), None)

    def way(self, source: str, goals: Iterable[str]) -> list[Edge] | None:
        """The fewest ways from `source` to the nearest of `goals` ([] when already there), None
        when the map knows none."""
        goals = set(goals)
        if source in goals:
            return []
        previous: dict[str, Edge] = {}
        queue = deque([source])
        while queue:
            place = queue.popleft()
            for target, edge in self.edges.get(place, {}).items():
                if target in previous or target == source:
                    continue
                previous[target] = edge
                if target in goals:
                    path = [edge]
                    while path[0].source != source:
                        path.insert(0, previous[path[0].source])
                    return path
                queue.append(target)
        return None
