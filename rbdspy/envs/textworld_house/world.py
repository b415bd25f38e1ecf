"""The world of a seed, and the rooms its quests start in.

- The world: `make_world(n_rooms, n_objects, rngs={"map": RandomState(s), "objects":
  RandomState(s + 1)})`. `populate()` puts some portable objects in the player's inventory; they are
  moved to the floor of a room (chosen by `RandomState(s + 2)`) so that quests need fetching. The
  player starts in the room from which most rooms can be reached without a key (TextWorld's first
  room can sit behind a locked door with the key out of reach, which leaves a world with a couple of
  quests).
- Start rooms (the house-starts stream): every room of the world, in an order of the world's own
  (`start_cycle`); `with_start` moves the player there and leaves every other fact as it was.

TextWorld is imported on first use (`_textworld`), so importing this package does not need it.
"""

from __future__ import annotations

from numpy.random import RandomState

from rbdspy.envs.textworld_house.spec import HouseSpec

# The random stream (with the world's seed) that orders the rooms `house-starts` quests start in.
START_STREAM = 3


def _textworld():
    try:
        import textworld  # optional: textworld (the envs extra)
        import textworld.generator  # noqa: F401  (optional: textworld; the generator is a subpackage)
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(
            "The persistent-world environment needs TextWorld: pip install 'rbdspy[envs]' (textworld==1.7.0)."
        ) from exc
    return textworld


# HouseSpec is frozen: one default instance is safe to share between calls.
def make_house(seed: int, spec: HouseSpec = HouseSpec()):  # noqa: B008
    """The world of `seed`: rooms, doors, containers, keys, objects; the player's starting
    inventory moved to the floor of a room so that every quest needs fetching."""
    textworld = _textworld()
    from textworld.generator.world import World  # optional: textworld (the envs extra)
    from textworld.logic import Proposition  # optional: textworld (the envs extra)

    world = textworld.generator.make_world(
        spec.n_rooms, spec.n_objects, rngs={"map": RandomState(seed), "objects": RandomState(seed + 1)}
    )
    rooms = sorted({a.name: a for f in world.facts for a in f.arguments if a.type == "r"}.items())
    rng = RandomState(seed + 2)
    start = _best_start(world.facts, dict(rooms))
    facts = []
    for fact in world.facts:
        if fact.name == "in" and fact.arguments[1].name == "I":
            facts.append(Proposition("at", [fact.arguments[0], rooms[rng.randint(len(rooms))][1]]))
        elif fact.name == "at" and fact.arguments[0].name == "P":
            facts.append(Proposition("at", [fact.arguments[0], start]))
        else:
            facts.append(fact)
    return World.from_facts(facts, kb=world.kb)


def _best_start(facts, rooms: dict):
    """The room from which most rooms are reachable through open or closed (unlocked) doors and
    doorless passages; the lowest room id among equals."""
    locked = {f.arguments[0].name for f in facts if f.name == "locked"}
    blocked = {
        (f.arguments[0].name, f.arguments[2].name) for f in facts if f.name == "link" and f.arguments[1].name in locked
    }
    edges: dict[str, set[str]] = {}
    for f in facts:
        if f.name in ("north_of", "south_of", "east_of", "west_of"):
            a, b = f.arguments[0].name, f.arguments[1].name
            if (a, b) not in blocked and (b, a) not in blocked:
                edges.setdefault(a, set()).add(b)
                edges.setdefault(b, set()).add(a)

    def reach(room: str) -> int:
        seen, todo = {room}, [room]
        while todo:
            for nxt in edges.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return len(seen)

    def order(name: str) -> tuple[int, int]:
        return (-reach(name), int(name.split("_")[-1]) if name.split("_")[-1].isdigit() else 0)

    return rooms[min(rooms, key=order)]


def with_start(world, room: str):
    """World `world` with the player in room `room` (a room id such as "r_3") instead of its start;
    every other fact, and the facts' order (on which entity names depend), unchanged."""
    from textworld.generator.world import World  # optional: textworld (the envs extra)
    from textworld.logic import Proposition  # optional: textworld (the envs extra)

    target = next(a for f in world.facts for a in f.arguments if a.type == "r" and a.name == room)
    facts = [
        Proposition("at", [f.arguments[0], target]) if f.name == "at" and f.arguments[0].name == "P" else f
        for f in world.facts
    ]
    return World.from_facts(facts, kb=world.kb)


def player_room(facts) -> str:
    """The id of the room the player is in, among `facts` (a world's, a state's, or an action's
    preconditions: "" when they place the player nowhere)."""
    return next((f.arguments[1].name for f in facts if f.name == "at" and f.arguments[0].name == "P"), "")


def start_cycle(world, seed: int) -> list[str]:
    """The world's room ids in the order quests of the `house-starts` stream start in them: a
    shuffle of its own (`RandomState([seed, START_STREAM])`), the same on every machine."""
    rooms = room_ids(world)
    return [rooms[i] for i in RandomState([seed, START_STREAM]).permutation(len(rooms))]


def room_ids(world) -> list[str]:
    """The world's room ids ("r_0", "r_1", ...), by number."""

    def number(name: str) -> tuple[int, str]:
        tail = name.split("_")[-1]
        return (int(tail) if tail.isdigit() else -1, name)

    return sorted({a.name for f in world.facts for a in f.arguments if a.type == "r"}, key=number)
