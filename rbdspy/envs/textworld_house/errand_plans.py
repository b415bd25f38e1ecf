"""Errands: every goal a world allows (take, eat, put, insert, open, unlock), in a seeded order
(`errands`), and the actions that reach one from the world's start (`plan_errand`). Random chains
miss goals that need several rooms; a plan reaches them."""

from __future__ import annotations

from numpy.random import RandomState

from rbdspy.envs.textworld_house.moves import _moves_to
from rbdspy.envs.textworld_house.world import player_room

# The random stream (with the world's seed) that orders the errands tried.
ERRAND_STREAM = 2


def errands(world, seed: int) -> list[tuple[str, str, str]]:
    """Every goal a quest of `world` may set, as (verb, thing, holder) over entity ids: take, eat,
    put on every supporter, insert into every container, open and unlock; in a seeded order
    (`RandomState([seed, ERRAND_STREAM])`)."""
    kinds = {a.name: a.type for f in world.facts for a in f.arguments}

    def of(*types: str) -> list[str]:
        return sorted(name for name, kind in kinds.items() if kind in types)

    shut = sorted({f.arguments[0].name for f in world.facts if f.name in ("closed", "locked")})
    locked = sorted({f.arguments[0].name for f in world.facts if f.name == "locked"})
    things = of("o", "f", "k")
    goals = [("take", t, "") for t in things] + [("eat", t, "") for t in of("f")]
    goals += [("put", t, s) for t in things for s in of("s")] + [("insert", t, c) for t in things for c in of("c")]
    goals += [("open", x, "") for x in shut] + [("unlock", x, "") for x in locked]
    return [goals[i] for i in RandomState([seed, ERRAND_STREAM]).permutation(len(goals))]


def plan_errand(world, errand: tuple[str, str, str]) -> list | None:
    """The actions that reach `errand`'s goal from the world's start: fetch the thing (opening, or
    unlocking with its key, what holds it), take it where it goes, with the fewest moves between
    rooms; None when a step cannot be done (a room behind a locked door, a key in a locked box)."""
    verb, thing, holder = errand
    planner = _Planner(world)
    if verb == "take":
        done = planner.fetch(thing)
    elif verb == "eat":
        done = planner.fetch(thing) and planner.do("eat", thing)
    elif verb in ("put", "insert"):
        done = thing != holder and planner.fetch(thing) and planner.reach(holder)
        done = done and (verb == "put" or planner.open(holder)) and planner.do(verb, thing, holder)
    elif verb == "open":
        done = planner.reach(thing) and planner.open(thing)
    else:
        key = planner.key_of(thing)
        done = bool(key) and planner.fetch(key) and planner.reach(thing) and planner.do("unlock", key, thing)
    return planner.plan if done and planner.plan else None


class _Planner:
    """A state of the world and the actions that led to it, for `plan_errand`."""

    def __init__(self, world):
        self.kb, self.state, self.plan = world.kb, world.state.copy(), []
        self.unlocking: set[str] = set()  # locks being opened: a key locked inside its own lock's box ends there

    def holds(self, name: str, *args: str) -> bool:
        return any(f.name == name and [a.name for a in f.arguments] == list(args) for f in self.state.facts)

    def kind(self, entity: str) -> str:
        return next(a.type for f in self.state.facts for a in f.arguments if a.name == entity)

    def rooms_of(self, entity: str) -> list[str]:
        """Where the player must be to act on `entity`: its room (its holder's), either side of a
        door, anywhere for something carried ([])."""
        for f in self.state.facts:
            args = [a.name for a in f.arguments]
            if f.name == "at" and args[0] == entity:
                return [args[1]]
            if f.name in ("on", "in") and args[0] == entity:
                return [] if args[1] == "I" else self.rooms_of(args[1])
        return sorted(
            {f.arguments[0].name for f in self.state.facts if f.name == "link" and f.arguments[1].name == entity}
        )

    def key_of(self, lock: str) -> str:
        return next(
            (f.arguments[0].name for f in self.state.facts if f.name == "match" and f.arguments[1].name == lock), ""
        )

    def reach(self, entity: str) -> bool:
        """Walks to where `entity` can be acted on (the nearest such room)."""
        rooms = self.rooms_of(entity)
        if not rooms or player_room(self.state.facts) in rooms:
            return True
        routes = [m for m in (_moves_to(self.state, room, self.kb) for room in rooms) if m is not None]
        if not routes:
            return False
        for move in min(routes, key=len):
            self.state.apply(move)
            self.plan.append(move)
        return True

    def do(self, verb: str, *entities: str) -> bool:
        """The first (by name) applicable action of `verb`'s rules that names all `entities`."""
        rules = [rule for name, rule in self.kb.rules.items() if name.split("/")[0] == verb]
        found = sorted(
            (
                a
                for a in self.state.all_applicable_actions(rules, self.kb.types.constants_mapping)
                if set(entities) <= {v.name for v in a.variables}
            ),
            key=str,
        )
        if not found:
            return False
        self.state.apply(found[0])
        self.plan.append(found[0])
        return True

    def open(self, entity: str) -> bool:
        """Opens `entity` where it is (unlocking it first, with its key, if locked); True if open."""
        if self.holds("open", entity) or self.kind(entity) not in ("c", "d"):
            return True
        if self.holds("locked", entity):
            if entity in self.unlocking:
                return False
            self.unlocking.add(entity)
            key = self.key_of(entity)
            if not (key and self.fetch(key) and self.reach(entity) and self.do("unlock", key, entity)):
                return False
        return self.do("open", entity)

    def fetch(self, thing: str) -> bool:
        """Takes `thing` (opening what holds it first); True if carried."""
        if self.holds("in", thing, "I"):
            return True
        box = next(
            (f.arguments[1].name for f in self.state.facts if f.name == "in" and f.arguments[0].name == thing), ""
        )
        if box and not (self.reach(box) and self.open(box)):
            return False
        return self.reach(thing) and self.do("take", thing)
