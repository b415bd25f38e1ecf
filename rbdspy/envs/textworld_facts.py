"""What is true in a persistent TextWorld world, read from the world's own facts, in words.

Two users: the `oracle-facts` control serves this text as a fixed memory (the ceiling for fact
memory: everything a bank could ever learn about the world's map and where things are), and the
lesson-truth check compares what a lesson says about rooms, objects, containers and keys with it.
Names are the ones every game of the world uses (`textworld_house.entity_names`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

DIRECTIONS = {"north_of": "north", "south_of": "south", "east_of": "east", "west_of": "west"}
PORTABLE = ("o", "f", "k")


@dataclass
class HouseFacts:
    """The world's facts by kind, with entity names. `exits[room]` lists (direction, room, door);
    `place[thing]` is ("floor" | "on" | "in", holder); `state[door or container]` is open, closed or
    locked; `key_for[door or container]` names its key."""

    start: str
    rooms: list[str] = field(default_factory=list)
    exits: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)
    place: dict[str, tuple[str, str]] = field(default_factory=dict)
    room_of: dict[str, str] = field(default_factory=dict)
    state: dict[str, str] = field(default_factory=dict)
    key_for: dict[str, str] = field(default_factory=dict)
    kind: dict[str, str] = field(default_factory=dict)

    def starting_in(self, room: str) -> HouseFacts:
        """The same facts with the player starting in `room` (a quest of the house-starts stream):
        the map text and the moves a lesson counts from the start begin there."""
        return replace(self, start=room)


def house_facts(world, names: dict[str, str]) -> HouseFacts:
    """The world's map, the place of every object and the state of doors and containers."""

    def name(var) -> str:
        return names.get(var.name) or var.name

    facts = list(world.facts)
    start = next(name(f.arguments[1]) for f in facts if f.name == "at" and f.arguments[0].name == "P")
    out = HouseFacts(start=start)
    doors = {}
    for f in facts:
        args = f.arguments
        if f.name == "link":
            doors[(args[0].name, args[2].name)] = name(args[1])
        elif f.name in ("open", "closed", "locked"):
            out.state[name(args[0])] = str(f.name)
        elif f.name == "match":
            out.key_for[name(args[1])] = name(args[0])
    for f in facts:
        args = f.arguments
        for var in args:
            if var.type not in ("P", "I"):
                out.kind[name(var)] = var.type
        if f.name in DIRECTIONS:  # north_of(a, b): a lies north of b, so from b go north to a
            door = doors.get((args[1].name, args[0].name), "")
            out.exits.setdefault(name(args[1]), []).append((DIRECTIONS[f.name], name(args[0]), door))
        elif f.name == "at" and args[0].name != "P":
            thing, room = name(args[0]), name(args[1])
            out.room_of[thing] = room
            if args[0].type in PORTABLE:
                out.place[thing] = ("floor", room)
        elif f.name in ("on", "in") and args[1].name != "I":
            out.place[name(args[0])] = (str(f.name), name(args[1]))
    out.rooms = sorted({r for r in out.exits} | {d[1] for exits in out.exits.values() for d in exits} | {start})
    for exits in out.exits.values():
        exits.sort()
    # Things on a supporter or in a container are in the holder's room.
    for thing, (relation, holder) in out.place.items():
        if relation != "floor" and holder in out.room_of:
            out.room_of[thing] = out.room_of[holder]
    return out


def _door_text(facts: HouseFacts, door: str) -> str:
    if not door:
        return ""
    state = facts.state.get(door, "open")
    key = f", opened with the {facts.key_for[door]}" if state == "locked" and door in facts.key_for else ""
    return f" through the {door} ({state}{key})"


def map_text(facts: HouseFacts) -> str:
    """One sentence per room: where each exit leads, and through which door."""
    parts = [f"You start in the {facts.start}."]
    for room in sorted(facts.exits, key=lambda r: (r != facts.start, r)):
        exits = "; ".join(f"{d} to the {to}{_door_text(facts, door)}" for d, to, door in facts.exits[room])
        parts.append(f"From the {room}: {exits}.")
    return " ".join(parts)


def places_text(facts: HouseFacts) -> str:
    """Where every portable object is, and the furniture each room holds."""
    parts = []
    for thing in sorted(facts.place):
        relation, holder = facts.place[thing]
        if relation == "floor":
            parts.append(f"the {thing} is on the floor of the {holder}")
        else:
            where = facts.room_of.get(holder, "")
            parts.append(f"the {thing} is {relation} the {holder}" + (f" (in the {where})" if where else ""))
    furniture = []
    for thing, room in sorted(facts.room_of.items()):
        kind = facts.kind.get(thing)
        if kind in ("s", "c") and thing not in facts.place:
            state = facts.state.get(thing)
            key = facts.key_for.get(thing)
            extra = ", ".join(x for x in (state, f"opened with the {key}" if key and state == "locked" else "") if x)
            furniture.append(f"the {thing} is in the {room}" + (f" ({extra})" if extra else ""))
    return "; ".join(parts + furniture) + "."


def oracle_items(facts: HouseFacts, world_label: str) -> list[dict[str, str]]:
    """The `oracle-facts` memory: the map and where things are, as memory items that name their
    world (an item holds for one world only)."""
    return [
        {
            "title": f"Map of {world_label}",
            "description": f"How the rooms of {world_label} connect (true in every task there).",
            "content": map_text(facts),
        },
        {
            "title": f"Where things are in {world_label}",
            "description": f"Where each object and piece of furniture of {world_label} is at the start of a task.",
            "content": places_text(facts),
        },
    ]
