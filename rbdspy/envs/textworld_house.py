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
from dataclasses import asdict, dataclass, field
from pathlib import Path

from numpy.random import RandomState

SPLIT_CYCLE = ("train", "dev", "dev", "train", "dev", "dev", "train", "dev", "dev", "test")
# Part of the cache directory's name: a change to how catalogues are made must not read old ones.
CATALOGUE_VERSION = 2
GOAL_EXCLUDE = ("go.*", "look.*", "examine.*", "close.*", "drop.*", "lock.*", "inventory.*")
STEP_EXCLUDE = ("look.*", "examine.*", "inventory.*")
# How many attempts may go without a new quest before a world is declared out of quests.
MAX_BARREN_ATTEMPTS = 100
CACHE_ENV = "RBDSPY_TEXTWORLD_CACHE"
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


def default_cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "rbdspy" / "textworld")


@dataclass(frozen=True)
class HouseSpec:
    """How a world and its quests are made. The defaults are the `house` stream's (chosen on
    build tasks of one world, see docs/results/memory.md)."""

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


def build_game(world, seed: int, chain):
    """The TextWorld Game of a chain in world `seed` (its own objective set from the goal)."""
    from textworld.generator import Event, Game, Quest  # optional: textworld (the envs extra)

    game = Game(world, make_grammar(seed), [Quest(win_events=[Event(actions=chain.actions)])])
    names = {key: info.name for key, info in game.infos.items() if info.name}
    goal = goal_of(chain.actions[-1], names)
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

    def _save(self) -> None:
        payload = {"seed": self.seed, "spec": asdict(self.spec), "attempts": self._attempts}
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
                self._extend()
            quest = self.quests(split)[index]
            self._ensure_compiled(quest)
        return quest

    def _used(self, before: int | None = None) -> frozenset:
        """The put/insert/eat goal actions of the quests accepted before attempt `before`."""
        keys = (q.final_action for q in self._quests if before is None or q.attempt < before)
        return frozenset(tuple(k) for k in keys if k and k[0] in FINAL_ONLY)

    def _extend(self) -> None:
        """Adds the next accepted quest to the catalogue."""
        seen, used = {q.goal for q in self._quests}, self._used()  # fixed until a quest is accepted
        for _ in range(MAX_BARREN_ATTEMPTS):
            attempt = self._attempts
            self._attempts += 1
            chain = sample_chain(self.world, self.seed, attempt, self.spec, used)
            if chain is None:
                continue
            game, goal = build_game(self.world, self.seed, chain)
            walkthrough = list(game.walkthrough or [])
            if goal in seen or not self.spec.min_walkthrough <= len(walkthrough) <= self.spec.max_walkthrough:
                continue
            split = SPLIT_CYCLE[len(self._quests) % len(SPLIT_CYCLE)]
            final = action_key(chain.actions[-1])
            quest = HouseQuest(self.seed, split, len(self.quests(split)), attempt, goal, tuple(walkthrough), final)
            quest = self._compile(quest, game)
            if quest is None:
                continue
            self._quests.append(quest)
            self._save()
            return
        raise ValueError(
            f"world {self.seed} ({self.spec.key}) yields no new quest in {MAX_BARREN_ATTEMPTS} attempts after "
            f"{len(self._quests)}: ask for fewer quests, or a larger world (more rooms or objects)"
        )

    def _compile(self, quest: HouseQuest, game) -> HouseQuest | None:
        """Compiles the quest's game into the cache; None when its walkthrough does not win it."""
        from textworld.generator import GameOptions, compile_game  # optional: textworld (the envs extra)

        options = GameOptions()
        options.path = str(self.dir / f"quest-{quest.attempt:05d}.z8")
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
        chain = sample_chain(self.world, self.seed, quest.attempt, self.spec, self._used(quest.attempt))
        game, goal = build_game(self.world, self.seed, chain)
        if goal != quest.goal or self._compile(quest, game) is None:
            raise RuntimeError(f"quest {quest.split}/{quest.index} of world {self.seed} no longer generates the same")

    def game_path(self, quest: HouseQuest) -> Path:
        return self.dir / quest.game_file
