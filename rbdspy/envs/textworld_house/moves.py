"""Moving between rooms: the fewest go and door-opening actions from one room to another
(`_moves_to`), and a quest's winning actions planned again from another start room (`replan`)."""

from __future__ import annotations

from rbdspy.envs.textworld_house.world import player_room

# Moves: a policy's go and door-opening actions are re-planned from another start room; everything
# else it does (take, put, unlock, open a container, ...) is kept, in its order.
MOVES = ("go/north", "go/south", "go/east", "go/west", "open/d")


def replan(world, policy) -> list | None:
    """`policy` (the actions that win a quest from the world's own start) from the start room of
    `world`: its moves dropped and, before each other action, the shortest moves to the room that
    action happens in. None when a room cannot be reached, or an action no longer applies."""
    state, plan = world.state.copy(), []
    for position, action in enumerate(policy):
        if action.name in MOVES and position < len(policy) - 1:
            continue
        room = player_room(action.preconditions)  # "": an action done anywhere (eat)
        moves = _moves_to(state, room, world.kb) if room else []
        if moves is None:
            return None
        for move in moves + [action]:
            if not state.apply(move):
                return None
            plan.append(move)
    return plan


def _moves_to(state, room: str, kb, max_moves: int = 16) -> list | None:
    """The fewest go and door-opening actions that take the player from where it is in `state` to
    `room` (None if no way is found within `max_moves`)."""
    rules = [kb.rules[name] for name in MOVES]
    frontier, seen = [(state, [])], {frozenset(state.facts)}
    for _ in range(max_moves + 1):
        following = []
        for current, moves in frontier:
            if player_room(current.facts) == room:
                return moves
            for move in current.all_applicable_actions(rules, kb.types.constants_mapping):
                after = current.apply_on_copy(move)
                key = frozenset(after.facts)
                if key not in seen:
                    seen.add(key)
                    following.append((after, moves + [move]))
        frontier = following
    return None
