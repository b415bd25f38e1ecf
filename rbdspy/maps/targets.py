"""What a task asks the map for: the places and things it names, and, where it names a kind of
thing ("find an animal"), where such a thing was found for tasks like it before.

Read from data, not from a game's task grammar:

- named: every place and thing the map knows whose words the task contains, in the order the task
  names them (a name inside a longer matched name, "box" in "red box", is the longer one's);
- by kind, for a task that names no thing anyone took: the tasks of its kind where the environment
  names kinds (`Environment.kind_of`: ScienceWorld's task type), else the tasks most like this one
  (their words, less the names each names, most in common, at least `KIND_SIMILARITY`) that an
  episode won by
  carrying, or answering with, a thing its own task did not name: that thing satisfied the kind,
  where it was is where to look, and what was done with it there is what to do with it again
  when it is in view. These come first: a task names where to bring a thing after finding it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

from rbdspy.maps.words import similarity, task_names, words
from rbdspy.maps.world_map import Handled, WorldMap

# How alike two tasks' words must be, less the names of places and things each names ("the red box
# in the kitchen"), for what satisfied one to be looked for in the other, where the environment
# names no kinds of task. Words alone cannot tell a name from a kind: one word apart is another
# kind of task as often ("the animal with the longest life span" / "... the shortest ...") as
# another colour of box whose name the map has not seen yet.
KIND_SIMILARITY = 0.75


@dataclass(frozen=True)
class Target:
    """Something the task needs: a `place` to reach, or a `thing` to reach (and, `carry`, to take
    where the map knows how), at `places` (best first). `kind`: found by what satisfied a task
    like this one, not by name; `handled`: what those tasks' episodes did with what satisfied
    them, in the order they did it."""

    name: str
    places: tuple[str, ...]
    thing: bool = True
    carry: bool = False
    kind: bool = False
    handled: tuple[Handled, ...] = ()


def _position(task: str, name: str) -> int:
    text = task.lower()
    found = [text.find(word) for word in words(name) if text.find(word) >= 0]
    return min(found) if found else len(text)


def named_targets(task: str, world: WorldMap) -> list[Target]:
    """The known places and things the task names, in the task's order."""
    candidates = [(p, False) for p in world.places] + [(t, True) for t in world.things]
    matched = [(name, thing) for name, thing in candidates if task_names(task, name)]
    # A name inside a longer matched one ("box" in "red box") is not a target of its own.
    matched = [(n, t) for n, t in matched if not any(words(n) < words(o) for o, _ in matched)]
    targets = []
    for name, thing in sorted(matched, key=lambda m: (_position(task, m[0]), not m[1], m[0])):
        places = tuple(world.where(name)) if thing else (name,)
        if places and all(t.name != name for t in targets):
            targets.append(Target(name, places, thing=thing, carry=thing and world.taking(name) is not None))
    return targets


def _unnamed(task: str, world: WorldMap) -> str:
    """The task's words less those of the places and things it names ("red box", "kitchen")."""
    named = set().union(*(words(n) for n in world.places | world.things if task_names(task, n)))
    return " ".join(sorted(words(task) - named))


def kind_targets(task: str, world: WorldMap, kind: str | None = None) -> list[Target]:
    """Where the things that satisfied the tasks most like this one were handled, when their tasks
    did not name them: one target, at those places, with what was done with them. Where the
    environment names the task's `kind`, the tasks of that kind are the ones alike (and no other)."""
    best, places, found = KIND_SIMILARITY, [], []
    for handled in world.handled:
        if not handled.won or task_names(handled.task, handled.thing):
            continue
        if kind is not None and handled.kind is not None:
            alike = 1.0 if handled.kind == kind else 0.0
        else:
            alike = similarity(_unnamed(task, world), _unnamed(handled.task, world))
        if alike > best:
            best, places, found = alike, [], []
        if alike == best:
            places.append(handled.place)
            found.append(handled)
    if not places:
        return []
    by_count = tuple(place for place, _ in Counter(places).most_common())
    done_with = tuple(h for h in found if h.action)
    return [Target(name=found[0].thing, places=by_count, thing=False, kind=True, handled=done_with)]


def task_targets(task: str, world: WorldMap, kind: str | None = None) -> list[Target]:
    """Everything the task asks the map for, in the order to reach it: a task that names no thing
    anyone ever took asks for a kind of thing first, then for the places and things it names.
    Where the environment names the task's `kind`, what satisfied that kind comes first even so:
    an episode that picked up the box a task names ("move it to the red box") does not make the
    box what the task fetches."""
    named = named_targets(task, world)
    if kind is None and any(t.carry for t in named):
        return named
    by_kind = kind_targets(task, world, kind)
    if by_kind and kind is not None:
        # A thing named as the kind names itself ("living thing" in a find-living-thing task) is
        # what the kind's target finds, not somewhere to go once it is found; and what satisfies
        # the kind is what the task fetches, so a thing it names besides is where to bring it (the
        # red box another episode once picked up is not carried).
        named = [replace(t, carry=False) for t in named if not (t.thing and words(t.name) <= words(kind))]
    return by_kind + named
