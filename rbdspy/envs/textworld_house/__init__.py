"""One persistent TextWorld world from a seed, and the quests it hosts.

Why: memory can only carry over where the world persists and the tasks vary (the paper's
websites). TextWorld's own generator makes such a stream: `make_world` builds rooms, doors,
containers, keys and objects from a seed; quests are then sampled *in that world* by forward
chaining from its state, so every game of a world starts from the same state and differs only in
what it asks. (`make_game` chains backward and invents objects, which changes the world: not used.)

Its parts, a module each:
- `spec`: how a world and its quests are made (`HouseSpec`).
- `world`: the world of a seed, and the rooms quests start in.
- `moves`: the fewest moves between rooms, and winning actions planned again from another room.
- `chains`: quests sampled by forward chaining, from the start room or after a walk.
- `errand_plans`: every goal a world allows, and the actions that reach one.
- `games`: a quest's TextWorld game, its goal and objective, and playing a compiled game.
- `splits`: the split each place of a catalogue belongs to.
- `catalogue`: a world's quests in order, generated as they are asked for and cached (`HouseCatalogue`).
- `starts`: the same quests, each starting in a room of its own (`StartsCatalogue`).
"""

from __future__ import annotations

from rbdspy.envs.textworld_house.catalogue import (
    CACHE_ENV,
    MAX_BARREN_ATTEMPTS,
    TIERS,
    HouseCatalogue,
    HouseQuest,
    default_cache_dir,
)
from rbdspy.envs.textworld_house.chains import (
    FINAL_ONLY,
    GOAL_EXCLUDE,
    STEP_EXCLUDE,
    WALK_STREAM,
    action_key,
    sample_chain,
    sample_walk,
    walks,
)
from rbdspy.envs.textworld_house.errand_plans import ERRAND_STREAM, errands, plan_errand
from rbdspy.envs.textworld_house.games import (
    Goal,
    build_game,
    entity_names,
    goal_of,
    make_grammar,
    replay_wins,
    start_game,
)
from rbdspy.envs.textworld_house.moves import MOVES, replan
from rbdspy.envs.textworld_house.spec import CATALOGUE_VERSION, HouseSpec
from rbdspy.envs.textworld_house.splits import SPLIT_CYCLE, catalogue_position, split_counts
from rbdspy.envs.textworld_house.starts import StartsCatalogue
from rbdspy.envs.textworld_house.world import (
    START_STREAM,
    make_house,
    player_room,
    room_ids,
    start_cycle,
    with_start,
)
from rbdspy.envs.textworld_house.world import _textworld as _textworld

__all__ = [
    "CACHE_ENV",
    "CATALOGUE_VERSION",
    "ERRAND_STREAM",
    "FINAL_ONLY",
    "GOAL_EXCLUDE",
    "MAX_BARREN_ATTEMPTS",
    "MOVES",
    "SPLIT_CYCLE",
    "START_STREAM",
    "STEP_EXCLUDE",
    "TIERS",
    "WALK_STREAM",
    "Goal",
    "HouseCatalogue",
    "HouseQuest",
    "HouseSpec",
    "StartsCatalogue",
    "action_key",
    "build_game",
    "catalogue_position",
    "default_cache_dir",
    "entity_names",
    "errands",
    "goal_of",
    "make_grammar",
    "make_house",
    "plan_errand",
    "player_room",
    "replan",
    "replay_wins",
    "room_ids",
    "sample_chain",
    "sample_walk",
    "split_counts",
    "start_cycle",
    "start_game",
    "walks",
    "with_start",
]
