"""One persistent TextWorld world from a seed, and the quests it hosts.

Why: memory can only carry over where the world persists and the tasks vary (the paper's
websites). TextWorld's own generator makes such a stream: `make_world` builds rooms, doors,
containers, keys and objects from a seed; quests are then sampled *in that world* by forward
chaining from its state, so every game of a world starts from the same state and differs only in
what it asks. (`make_game` chains backward and invents objects, which changes the world: not used.)

- The world: `make_world(n_rooms, n_objects, rngs={"map": RandomState(s), "objects":
  RandomState(s + 1)})`. `populate()` puts some portable objects in the player's inventory; they are
  moved to the floor of a room (chosen by `RandomState(s + 2)`) so that quests need fetching. The
  player starts in the room from which most rooms can be reached without a key (TextWorld's first
  room can sit behind a locked door with the key out of reach, which leaves a world with a couple of
  quests).
- A quest: forward chaining from `world.state`, `length` steps with any rule for the first ones and
  a goal rule (no go/look/examine/close/drop/lock) for the last; attempt `a` of world `s` draws from
  `RandomState([s, a])`, so the catalogue is the same on every machine and process and can be
  extended from where a cache left it. The requested length is an upper bound: the game's
  walkthrough (its winning policy) drops what the goal does not need, and quests are kept when that
  walkthrough has `min_walkthrough`..`max_walkthrough` actions, their goal is new, and replaying it
  in the compiled game wins.
- Further quests (`TIERS`): once a hundred attempts in a row find no new goal near the start room,
  the catalogue goes on with quests that first walk to a room reached without a key and sample a
  chain there, their walkthroughs up to 2, then 4 actions longer; then it plans, in a seeded order,
  every goal the world allows (take, eat, put, insert, open, unlock) and keeps those won within 4
  actions more. After that the world is out of quests, and the catalogue remembers it
  (`exhausted`, `stop_reason`). The quests before the first barren run are the original
  procedure's, unchanged.
- Start rooms (`StartsCatalogue`, the house-starts stream): the same quests, each starting in a
  room of its own, its winning actions planned again from there (`replan`) and replayed to win.
- Names: every game of a world is built with the grammar from the same seed (the world's), so an
  object has one name in all of them; `only_last_action` keeps TextWorld's objective from narrating
  the walkthrough, and the objective shown is written here from the goal alone ("Put the burger on
  the plate."), never saying where things are.
- Splits: accepted quests take turns in a cycle of ten, three train, six dev and one test
  (`SPLIT_CYCLE`): disjoint quests in the same world, each quest's split fixed by its place in the
  catalogue. Dev gets the most because the measured stream is twice the build stream.
- Compiled games (~0.4 MB each, about a second to compile) live in a cache directory
  (`RBDSPY_TEXTWORLD_CACHE`, default `~/.cache/rbdspy/textworld`) and are never committed.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import warnings
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from numpy.random import RandomState

SPLIT_CYCLE = ("train", "dev", "dev", "train", "dev", "dev", "train", "dev", "dev", "test")
# Part of the cache directory's name: a change to how catalogues are made must not read old ones.
CATALOGUE_VERSION = 2
GOAL_EXCLUDE = ("go.*", "look.*", "examine.*", "close.*", "drop.*", "lock.*", "inventory.*")
STEP_EXCLUDE = ("look.*", "examine.*", "inventory.*")
# How many attempts may go without a new quest before a sampled tier (below) is declared spent.
MAX_BARREN_ATTEMPTS = 100
# The tiers a catalogue goes through, each once the one before is spent: how its quests are made,
# and how many actions longer than the spec's `max_walkthrough` their walkthroughs may be. Tier 0 is
# the procedure every world's first quests were made with, and stays as it was. A world whose start
# room sees few things runs out of near goals long before a stream's sixty quests, so "walk" quests
# first walk to another room and sample a chain there (`sample_walk`); random chains miss goals that
# need several rooms, so the last tier, "errand", plans every goal the world allows in turn
# (`errands`, `plan_errand`).
TIERS = (("chain", 0), ("walk", 2), ("walk", 4), ("errand", 4))
# The random streams (with the world's seed) that pick the room a walk goes to (and the attempt)
# and the order errands are tried in.
WALK_STREAM = 1
ERRAND_STREAM = 2
CACHE_ENV = "RBDSPY_TEXTWORLD_CACHE"
# The random stream (with the world's seed) that orders the rooms `house-starts` quests start in.
START_STREAM = 3
_LOCK = threading.Lock()


def _textworld():
    try:
        import textworld  # optional: textworld (the envs extra)
        import textworld.generator  # noqa: F401  (optional: textworld; the generator is a subpackage)
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(
            "The persistent-world environment needs TextWorld: pip install 'rbdspy[envs]' (textworld==1.7.0)."
        ) from exc
    return textworld


def catalogue_position(split: str, index: int) -> int:
    """Where quest `index` of `split` sits in a world's catalogue (splits take turns, `SPLIT_CYCLE`)."""
    turns = [position for position, name in enumerate(SPLIT_CYCLE) if name == split]
    if not turns:
        raise ValueError(f"split must be one of train, dev, test; got {split!r}")
    return len(SPLIT_CYCLE) * (index // len(turns)) + turns[index % len(turns)]


def split_counts(n_quests: int) -> dict[str, int]:
    """How many quests of each split the first `n_quests` of a catalogue hold."""
    counts = dict.fromkeys(SPLIT_CYCLE, 0)
    for position in range(n_quests):
        counts[SPLIT_CYCLE[position % len(SPLIT_CYCLE)]] += 1
    return counts


def default_cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "rbdspy" / "textworld")


@dataclass(frozen=True)
class HouseSpec:
    """How a world and its quests are made. The defaults are the `house` stream's (chosen on
    build tasks of one world; measured: docs/results/memory.md#a-world-that-persists-the-house-stream)."""

    n_rooms: int = 8
    n_objects: int = 40
    min_walkthrough: int = 2
    max_walkthrough: int = 4

    def __post_init__(self):
        if self.n_rooms < 2:
            raise ValueError(f"a house needs at least 2 rooms; got n_rooms={self.n_rooms}")
        if self.n_objects < 1:
            raise ValueError(f"a house needs at least 1 object; got n_objects={self.n_objects}")
        if not 1 <= self.min_walkthrough <= self.max_walkthrough:
            raise ValueError(
                f"walkthrough lengths must satisfy 1 <= min <= max; got {self.min_walkthrough}..{self.max_walkthrough}"
            )

    @property
    def key(self) -> str:
        """A directory name that changes whenever a game of the world would."""
        walk = f"w{self.min_walkthrough}-{self.max_walkthrough}"
        return f"v{CATALOGUE_VERSION}-r{self.n_rooms}-o{self.n_objects}-{walk}"


@dataclass(frozen=True)
class Goal:
    """What a quest asks: the goal rule's name ("put", "take/c", ...) and its entities by role."""

    rule: str
    obj: str = ""
    target: str = ""

    def objective(self) -> str:
        verb = self.rule.split("/")[0]
        if verb == "take":
            return f"Take the {self.obj}."
        if verb == "put":
            return f"Put the {self.obj} on the {self.target}."
        if verb == "insert":
            return f"Put the {self.obj} in the {self.target}."
        if verb == "eat":
            return f"Eat the {self.obj}."
        if verb in ("open", "unlock"):
            return f"{verb.capitalize()} the {self.target}."
        raise ValueError(f"no objective for goal rule {self.rule!r}")

    @property
    def entities(self) -> tuple[str, ...]:
        return tuple(e for e in (self.obj, self.target) if e)


@dataclass(frozen=True)
class HouseQuest:
    """One quest of a world: where it sits in the catalogue, what it asks and how it is won."""

    world_seed: int
    split: str
    index: int
    attempt: int
    goal: Goal
    walkthrough: tuple[str, ...]
    final_action: tuple[str, ...] = ()
    game_file: str = field(default="", compare=False)
    start: str = ""  # the room id its game starts in ("": the world's own start room)
    tier: int = 0  # the tier it was made in (TIERS)

    @property
    def objective(self) -> str:
        return self.goal.objective()

    def to_dict(self) -> dict:
        row = asdict(self)
        row["walkthrough"] = list(self.walkthrough)
        row["final_action"] = list(self.final_action)
        return row

    @classmethod
    def from_dict(cls, row: dict) -> HouseQuest:
        tuples = {key: tuple(row.get(key, ())) for key in ("walkthrough", "final_action")}
        return cls(**{**row, **tuples, "goal": Goal(**row["goal"])})


def make_house(seed: int, spec: HouseSpec = HouseSpec()):
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


def make_grammar(seed: int):
    """The grammar every game of world `seed` is built with (same seed: same names)."""
    _textworld()
    from textworld.generator import make_grammar as tw_make_grammar  # optional: textworld (the envs extra)

    return tw_make_grammar({"only_last_action": True}, rng=RandomState(seed))


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


def goal_of(action, names: dict[str, str]) -> Goal:
    """The goal a chain's last action sets, by role: the object moved or eaten, and the
    supporter, container or door it is put on, put in, opened or unlocked."""
    by_type: dict[str, str] = {}
    for var in action.variables:
        by_type.setdefault(var.type, names.get(var.name) or var.name)
    obj = next((by_type[t] for t in ("o", "f", "k") if t in by_type), "")
    rule = action.name
    if rule == "put":
        return Goal(rule, obj, by_type.get("s", ""))
    if rule == "insert":
        return Goal(rule, obj, by_type.get("c", ""))
    if rule.startswith(("open", "unlock")):
        return Goal(rule, "", by_type.get(rule.split("/")[-1], ""))
    return Goal(rule, obj)


def build_game(world, seed: int, actions):
    """The TextWorld Game of a quest's actions in world `seed` (its own objective set from the goal)."""
    from textworld.generator import Event, Game, Quest  # optional: textworld (the envs extra)

    game = Game(world, make_grammar(seed), [Quest(win_events=[Event(actions=actions)])])
    names = {key: info.name for key, info in game.infos.items() if info.name}
    goal = goal_of(actions[-1], names)
    game.objective = goal.objective()
    return game, goal


def entity_names(world, seed: int) -> dict[str, str]:
    """The name of every entity of world `seed`, as all its games call it."""
    from textworld.generator import Game  # optional: textworld (the envs extra)

    game = Game(world, make_grammar(seed), [])
    return {key: info.name for key, info in game.infos.items() if info.name}


def start_game(game_file: str | Path, infos):
    """TextWorld's environment on a compiled game. Jericho warns that a TextWorld game is "not fully
    supported" (its own score and move detection): TextWorld reads both itself, so it is silenced."""
    textworld = _textworld()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*is not fully supported.*")
        env = textworld.start(str(game_file), infos)
        env.reset = _quiet(env.reset)
    return env


def _quiet(reset):
    def wrapped(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*is not fully supported.*")
            return reset(*args, **kwargs)

    return wrapped


def replay_wins(game_file: str | Path, walkthrough: list[str]) -> bool:
    textworld = _textworld()
    env = start_game(game_file, textworld.EnvInfos(won=True))
    try:
        state = env.reset()
        for command in walkthrough:
            state, _, done = env.step(command)
            if done:
                break
        return bool(state.won)
    finally:
        env.close()


def _write_json(path: Path, payload: dict) -> None:
    """Atomically, with a temporary name of this writer's own: threads and processes may write
    the same catalogue at once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=path.name, suffix=".tmp", delete=False) as tmp:
        json.dump(payload, tmp, indent=1)
    os.replace(tmp.name, path)


class HouseCatalogue:
    """The quests of world `seed` in catalogue order, generated as they are first asked for and
    cached (catalogue.json and the compiled games) under `cache_dir/world-<seed>-<spec>/`."""

    def __init__(self, seed: int, spec: HouseSpec = HouseSpec(), cache_dir: str | Path | None = None):
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"world seed must be a non-negative integer; got {seed!r}")
        self.seed, self.spec = seed, spec
        self.dir = Path(cache_dir or default_cache_dir()) / f"world-{seed}-{spec.key}"
        self._world = None
        self._quests: list[HouseQuest] = []
        self._attempts = 0
        self._tier = 0  # the tier new quests are sought in (TIERS)
        self._errand_start = 0  # the attempt that tries the first errand (the errand tier's first)
        self._errands: list[tuple[str, str, str]] | None = None
        self._exhausted = False  # the world has yielded every quest it will (saved: asked again, it says so at once)
        self._walks: list[tuple[str, list]] | None = None
        self._load()

    @property
    def world(self):
        if self._world is None:
            self._world = make_house(self.seed, self.spec)
        return self._world

    def _load(self) -> None:
        path = self.dir / "catalogue.json"
        if path.is_file():
            saved = json.loads(path.read_text(encoding="utf-8"))
            self._quests = [HouseQuest.from_dict(row) for row in saved["quests"]]
            self._attempts = int(saved["attempts"])
            self._tier = int(saved.get("tier", 0))
            self._errand_start = int(saved.get("errand_start", 0))
            self._exhausted = bool(saved.get("exhausted", False))

    def _save(self) -> None:
        payload = {"seed": self.seed, "spec": asdict(self.spec), "attempts": self._attempts}
        payload["tier"] = self._tier
        payload["errand_start"] = self._errand_start
        payload["exhausted"] = self._exhausted
        payload["quests"] = [q.to_dict() for q in self._quests]
        _write_json(self.dir / "catalogue.json", payload)

    def quests(self, split: str | None = None) -> list[HouseQuest]:
        """The quests generated so far (of `split`)."""
        return [q for q in self._quests if split is None or q.split == split]

    def quest(self, split: str, index: int) -> HouseQuest:
        """Quest `index` of `split`, generating the catalogue up to it; its game compiled."""
        if split not in SPLIT_CYCLE:
            raise ValueError(f"split must be one of train, dev, test; got {split!r}")
        with _LOCK:
            while len(self.quests(split)) <= index:
                if not self._extend():
                    raise ValueError(self._out_of_quests())
            quest = self.quests(split)[index]
            self._ensure_compiled(quest)
        return quest

    def fill(self, n_quests: int) -> int:
        """Generates the catalogue up to `n_quests` quests, or as far as the world goes; returns how
        many it holds (fewer than `n_quests` only when the world is out of quests)."""
        with _LOCK:
            while len(self._quests) < n_quests and self._extend():
                pass
            return len(self._quests)

    @property
    def exhausted(self) -> bool:
        """Whether the world is known to hold no more quests than the catalogue has."""
        return self._exhausted

    def _used(self, before: int | None = None) -> frozenset:
        """The put/insert/eat goal actions of the quests accepted before attempt `before`."""
        keys = (q.final_action for q in self._quests if before is None or q.attempt < before)
        return frozenset(tuple(k) for k in keys if k and k[0] in FINAL_ONLY)

    def _extend(self) -> bool:
        """Adds the next accepted quest to the catalogue; False when the world is out of quests.

        A sampled tier is spent after `MAX_BARREN_ATTEMPTS` attempts in a row find no quest, the
        errand tier once every errand is tried; the next tier goes on from the following attempt,
        and after the last the catalogue is marked exhausted (saved): asked again, it answers at
        once instead of searching attempts a fresh catalogue never reaches, so a catalogue is the
        same whatever was asked of it before."""
        while not self._exhausted:
            seen, used = {q.goal for q in self._quests}, self._used()  # fixed until a quest is accepted
            for _ in range(self._budget()):
                attempt = self._attempts
                self._attempts += 1
                quest = self._try_attempt(attempt, self._tier, seen, used)
                if quest is not None:
                    self._quests.append(quest)
                    self._save()
                    return True
            self._next_tier()
        return False

    def _budget(self) -> int:
        """How many attempts the current tier may still make without a new quest."""
        if TIERS[self._tier][0] != "errand":
            return MAX_BARREN_ATTEMPTS
        return max(0, len(self._errand_list()) - (self._attempts - self._errand_start))

    def _next_tier(self) -> None:
        if self._tier + 1 < len(TIERS):
            self._tier += 1  # no new goal here: on to goals further from the start room
            if TIERS[self._tier][0] == "errand":
                self._errand_start = self._attempts
        else:
            self._exhausted = True
        self._save()

    def _try_attempt(self, attempt: int, tier: int, seen: set, used: frozenset) -> HouseQuest | None:
        """The quest attempt `attempt` of `tier` yields (compiled), or None: no chain or plan, a goal
        already asked, a walkthrough out of the tier's bounds, or one that does not win the game."""
        actions = self._actions(attempt, tier, used)
        if actions is None or (TIERS[tier][0] == "errand" and len(actions) > self.longest(tier)):
            return None  # an errand's plan is as short as its walkthrough, near enough: skip building its game
        game, goal = build_game(self.world, self.seed, actions)
        walkthrough = list(game.walkthrough or [])
        if goal in seen or not self.spec.min_walkthrough <= len(walkthrough) <= self.longest(tier):
            return None
        split = SPLIT_CYCLE[len(self._quests) % len(SPLIT_CYCLE)]
        final = action_key(actions[-1])
        if final[0] in FINAL_ONLY and final in used:
            return None
        quest = HouseQuest(self.seed, split, len(self.quests(split)), attempt, goal, tuple(walkthrough), final)
        return self._compile(replace(quest, tier=tier), game)

    def _actions(self, attempt: int, tier: int, used: frozenset):
        """The actions of attempt `attempt` in `tier` (None when it makes none)."""
        kind = TIERS[tier][0]
        if kind == "chain":
            chain = sample_chain(self.world, self.seed, attempt, self.spec, used)
            return None if chain is None else list(chain.actions)
        if kind == "walk":
            if self._walks is None:
                self._walks = walks(self.world)
            return sample_walk(self.world, self.seed, attempt, self.spec, used, self._walks)
        return plan_errand(self.world, self._errand_list()[attempt - self._errand_start])

    def _errand_list(self) -> list[tuple[str, str, str]]:
        if self._errands is None:
            self._errands = errands(self.world, self.seed)
        return self._errands

    def longest(self, tier: int) -> int:
        """The longest walkthrough a quest of `tier` may have."""
        return self.spec.max_walkthrough + TIERS[tier][1]

    def stop_reason(self) -> str:
        """Why the catalogue ends where it does, in words ("" while it can grow)."""
        if not self._exhausted:
            return ""
        rooms = len(walks(self.world))
        return (
            f"every goal won within {self.longest(len(TIERS) - 1)} actions of the start room is asked "
            f"({len(self._errand_list())} goals tried; {rooms} rooms reached without a key)"
        )

    def _out_of_quests(self) -> str:
        return (
            f"world {self.seed} ({self.spec.key}) yields no new quest after {len(self._quests)}: {self.stop_reason()}; "
            "ask for fewer quests, or a larger world (more rooms or objects)"
        )

    def _compile(self, quest: HouseQuest, game, name: str = "") -> HouseQuest | None:
        """Compiles the quest's game into the cache (as `name`, default quest-<attempt>.z8); None
        when its walkthrough does not win it."""
        from textworld.generator import GameOptions, compile_game  # optional: textworld (the envs extra)

        options = GameOptions()
        options.path = str(self.dir / (name or f"quest-{quest.attempt:05d}.z8"))
        options.force_recompile = True
        game_file = compile_game(game, options)
        Path(game_file).with_suffix(".ni").unlink(missing_ok=True)  # Inform 7 source: not needed to play
        if not replay_wins(game_file, list(quest.walkthrough)):
            for suffix in (".z8", ".json"):
                Path(game_file).with_suffix(suffix).unlink(missing_ok=True)
            return None
        return HouseQuest(**{**quest.__dict__, "game_file": Path(game_file).name})

    def _ensure_compiled(self, quest: HouseQuest) -> None:
        """A catalogue copied without its games (or a cleaned cache) recompiles them."""
        path = self.dir / quest.game_file
        if path.is_file() and path.with_suffix(".json").is_file():
            return
        game, goal = build_game(self.world, self.seed, self.actions(quest))
        if goal != quest.goal or self._compile(quest, game) is None:
            raise RuntimeError(f"quest {quest.split}/{quest.index} of world {self.seed} no longer generates the same")

    def actions(self, quest: HouseQuest) -> list:
        """The actions an accepted quest was made from, sampled again (the same: attempts are seeded)."""
        actions = self._actions(quest.attempt, quest.tier, self._used(quest.attempt))
        if actions is None:
            raise RuntimeError(f"quest {quest.split}/{quest.index} of world {self.seed} no longer generates")
        return actions

    def game_path(self, quest: HouseQuest) -> Path:
        return self.dir / quest.game_file


class StartsCatalogue:
    """The quests of a world's catalogue, each starting in a room of its own (the `house-starts`
    stream): the quest at catalogue position p starts in room p of the world's start cycle
    (`start_cycle`, over and over), or in the next room of the cycle from which its winning actions,
    re-planned (`replan`), take at least `min_walkthrough` actions and win the compiled game. The
    world's own start room is one of the cycle; a quest placed there is the house quest as it is.
    Placements are cached in starts.json beside the catalogue, games as quest-<attempt>-<room>.z8."""

    def __init__(self, house: HouseCatalogue):
        self.house = house
        self.dir = house.dir
        self._placed: dict[str, HouseQuest] = {}
        path = self.dir / "starts.json"
        if path.is_file():
            saved = json.loads(path.read_text(encoding="utf-8"))
            self._placed = {key: HouseQuest.from_dict(row) for key, row in saved["quests"].items()}

    def _save(self) -> None:
        payload = {"seed": self.house.seed, "spec": asdict(self.house.spec)}
        payload["quests"] = {key: quest.to_dict() for key, quest in self._placed.items()}
        _write_json(self.dir / "starts.json", payload)

    def quest(self, split: str, index: int) -> HouseQuest:
        """Quest `index` of `split`, starting in its room; its game compiled."""
        base = self.house.quest(split, index)
        key = f"{split}/{index}"
        with _LOCK:
            quest = self._placed.get(key)
            if quest is None:
                quest = self._placed[key] = self._place(base)
                self._save()
            elif not self.game_path(quest).is_file() and self._start_in(base, quest.start) != quest:
                raise RuntimeError(f"quest {key} of world {base.world_seed} no longer starts the same")
        return quest

    def game_path(self, quest: HouseQuest) -> Path:
        return self.dir / quest.game_file

    def _place(self, base: HouseQuest) -> HouseQuest:
        cycle = start_cycle(self.house.world, self.house.seed)
        position = catalogue_position(base.split, base.index)
        for offset in range(len(cycle)):
            quest = self._start_in(base, cycle[(position + offset) % len(cycle)])
            if quest is not None:
                return quest
        raise RuntimeError(f"quest {base.split}/{base.index} of world {base.world_seed} starts in no room")

    def _start_in(self, base: HouseQuest, room: str) -> HouseQuest | None:
        """`base` starting in `room`, compiled; None when it cannot be won from there in
        `min_walkthrough` actions or more."""
        world = self.house.world
        if room == player_room(world.facts):
            return replace(base, start=room)
        moved = with_start(world, room)
        plan = replan(moved, self._policy(base))
        if plan is None:
            return None
        game, goal = build_game(moved, self.house.seed, plan)
        walkthrough = tuple(game.walkthrough or ())
        if goal != base.goal or len(walkthrough) < self.house.spec.min_walkthrough:
            return None
        quest = replace(base, walkthrough=walkthrough, start=room)
        return self.house._compile(quest, game, f"quest-{base.attempt:05d}-{room}.z8")

    def _policy(self, base: HouseQuest):
        """The actions that win `base` from the world's own start (the game's winning policy)."""
        from textworld.generator.game import GameProgression  # optional: textworld (the envs extra)

        game, _ = build_game(self.house.world, self.house.seed, self.house.actions(base))
        return list(GameProgression(game).winning_policy or [])
