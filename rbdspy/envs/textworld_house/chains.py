"""Quests sampled in a world by forward chaining from its state.

A quest: forward chaining from `world.state`, `length` steps with any rule for the first ones and a
goal rule (no go/look/examine/close/drop/lock) for the last; attempt `a` of world `s` draws from
`RandomState([s, a])`, so the catalogue is the same on every machine and process and can be extended
from where a cache left it. The requested length is an upper bound: the game's walkthrough (its
winning policy) drops what the goal does not need. A walk quest first walks to a room reached
without a key (`walks`, `sample_walk`) and samples its chain there.
"""

from __future__ import annotations

from numpy.random import RandomState

from rbdspy.envs.textworld_house.moves import _moves_to
from rbdspy.envs.textworld_house.spec import HouseSpec
from rbdspy.envs.textworld_house.world import player_room, room_ids

GOAL_EXCLUDE = ("go.*", "look.*", "examine.*", "close.*", "drop.*", "lock.*", "inventory.*")
STEP_EXCLUDE = ("look.*", "examine.*", "inventory.*")


# The random stream (with the world's seed) that picks the room a walk goes to (and the attempt).
WALK_STREAM = 1


def _rules(kb, exclude: tuple[str, ...]):
    return kb.rules.get_matching(".*", exclude=list(exclude))


# Goal actions that are never a step towards another goal: once a quest ends with one, chains may
# not use it again, so that later attempts find new goals instead of drawing the old ones again.
FINAL_ONLY = ("put", "insert", "eat")


def action_key(action) -> tuple[str, ...]:
    return (action.name, *(v.name for v in action.variables))


def sample_chain(world, seed: int, attempt: int, spec: HouseSpec, used: frozenset = frozenset()):
    """The chain of attempt `attempt` in world `seed`, or None when none exists for its length.
    `used` holds the keys (`action_key`) of put/insert/eat actions that earlier quests end with."""
    from textworld.generator import QuestGenerationError, sample_quest  # optional: textworld (the envs extra)
    from textworld.generator.chaining import ChainingOptions  # optional: textworld (the envs extra)

    class Options(ChainingOptions):
        def check_action(self, state, action) -> bool:
            if action.name in FINAL_ONLY and action_key(action) in used:
                return False
            return super().check_action(state, action)

    rng = RandomState([seed, attempt])
    length = int(rng.randint(spec.min_walkthrough, spec.max_walkthrough + 1))
    options = Options()
    options.backward = False
    options.create_variables = False  # a quest may not invent objects: the world stays the same
    options.min_length = options.max_length = length
    options.min_depth = options.max_depth = length
    options.kb = world.kb
    options.rules_per_depth = [_rules(world.kb, STEP_EXCLUDE)] * (length - 1) + [_rules(world.kb, GOAL_EXCLUDE)]
    options.rng = rng
    try:
        chain = sample_quest(world.state, options)
    except QuestGenerationError:
        return None
    if chain.initial_state != world.state:  # forward chaining must start from the world as it is
        raise RuntimeError(f"quest attempt {attempt} of world {seed} changed the world's state")
    return chain


def walks(world) -> list[tuple[str, list]]:
    """Every room the player can walk to from its start without a key (go, open a door), with the
    fewest moves that get there; by room number."""
    home = player_room(world.facts)
    found = [(room, _moves_to(world.state, room, world.kb)) for room in room_ids(world) if room != home]
    return [(room, moves) for room, moves in found if moves]


def sample_walk(world, seed: int, attempt: int, spec: HouseSpec, used: frozenset, rooms: list[tuple[str, list]]):
    """The actions of walk attempt `attempt` in world `seed`: the moves to one of `rooms` (`walks`,
    picked by `RandomState([seed, attempt, WALK_STREAM])`), then the chain attempt `attempt` samples
    from there; None when there is no room to walk to or no chain."""
    from textworld.generator.world import World  # optional: textworld (the envs extra)

    if not rooms:
        return None
    _, moves = rooms[RandomState([seed, attempt, WALK_STREAM]).randint(len(rooms))]
    facts = list(world.facts)
    for move in moves:  # the world as the walk leaves it: the player moved, the doors it opened open
        removed, added = move.removed, move.added
        facts = [f for f in facts if f not in removed] + sorted(f for f in added if f not in facts)
    chain = sample_chain(World.from_facts(sorted(facts), kb=world.kb), seed, attempt, spec, used)
    return None if chain is None else list(moves) + list(chain.actions)
