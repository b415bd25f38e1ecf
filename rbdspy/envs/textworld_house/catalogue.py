"""A world's quests in catalogue order (`HouseCatalogue`), generated as they are first asked for.

- Quests are kept when their game's walkthrough has `min_walkthrough`..`max_walkthrough` actions,
  their goal is new, and replaying it in the compiled game wins.
- Further quests (`TIERS`): once a hundred attempts in a row find no new goal near the start room,
  the catalogue goes on with quests that first walk to a room reached without a key and sample a
  chain there, their walkthroughs up to 2, then 4 actions longer; then it plans, in a seeded order,
  every goal the world allows (take, eat, put, insert, open, unlock) and keeps those won within 4
  actions more. After that the world is out of quests, and the catalogue remembers it
  (`exhausted`, `stop_reason`). The quests before the first barren run are the original
  procedure's, unchanged.
- Compiled games (~0.4 MB each, about a second to compile) live in a cache directory
  (`RBDSPY_TEXTWORLD_CACHE`, default `~/.cache/rbdspy/textworld`) and are never committed.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from rbdspy.envs.textworld_house.chains import FINAL_ONLY, action_key, sample_chain, sample_walk, walks
from rbdspy.envs.textworld_house.errand_plans import errands, plan_errand
from rbdspy.envs.textworld_house.games import Goal, build_game, replay_wins
from rbdspy.envs.textworld_house.spec import HouseSpec
from rbdspy.envs.textworld_house.splits import SPLIT_CYCLE
from rbdspy.envs.textworld_house.world import make_house

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


CACHE_ENV = "RBDSPY_TEXTWORLD_CACHE"
# One lock for every catalogue in the process, the house-starts ones included: generating a quest
# changes a catalogue and writes its files.
_LOCK = threading.Lock()


def default_cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "rbdspy" / "textworld")


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

    # HouseSpec is frozen: one default instance is safe to share between catalogues.
    def __init__(self, seed: int, spec: HouseSpec = HouseSpec(), cache_dir: str | Path | None = None):  # noqa: B008
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
