"""TextWorld-Express (textworld-express==1.1.0) behind the rbdspy `Environment` protocol.

TextWorld-Express ships eight games in one JVM: cookingworld, twc (TextWorld Commonsense), coin
(Coin Collector), mapreader, arithmetic, sorting, simonsays, peckingorder. A step is about a
millisecond, so gold replays and perturbation checks are nearly free.

Splits: each game has train/dev/test seed lists (`getSeedsTrain/Dev/Test`: 0-999,
10000-10999, 20000-20999) *and* the split is passed to the generator as the "fold", which
selects a disjoint set of objects (the same seed in another fold is a different game). A task id
therefore names both: `twx/coin/dev/10003`.

Game parameters (`numLocations=3,numDistractorItems=0,...`) change the game a seed makes, so they
are part of the task id (`twx/cookingworld/train/3?numLocations=3`). The adapter's `params`
sets them per game for the tasks it lists; an id carries its own.

Success is ground truth: the game's `tasksuccess` flag (score 1). `taskfailure` (e.g. eating the
meal before it is ready) ends the episode as a failure. Admissible actions are the game's own
`validActions` (they are already short), sorted, capped.

Not thread-safe: one episode at a time per adapter; use one adapter per worker.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from rbdspy.envs.actions import Act
from rbdspy.envs.base import EnvironmentBase, Observation, Split, StepResult, TaskRef, Whereabouts, interleave
from rbdspy.envs.gold_cache import GoldCache
from rbdspy.envs.textworld_compass import TEXTWORLD_LANGUAGE, opposite_move, twx_grammar

NAME = "twx"
UNKNOWN_ACTION = "Unknown action"
EMPTY_ACTION = "No action given."
INFO_ACTIONS = ("look around", "inventory", "task")
# Games whose packaged gold agent explores by an unseeded random walk (see gold_path).
RANDOM_WALK_GOLD = frozenset({"coin", "twc"})
_LOCATION = re.compile(r"You are in the ([^.]+)\.")
# The objects of the game's valid actions ("take coin", "open fridge"); doors are the map's edges.
_OBJECT = re.compile(r"^(?:take|open|close|examine|eat|read|cook|put)\s+(?!door\b)(.+?)(?:\s+(?:in|on)\s+.+)?$")
_CARRIED = re.compile(r"^\s+(?:an?|the|some)\s+(.+?)\s*$", re.MULTILINE)
_GRAMMAR = twx_grammar()


def _location(state: dict) -> str:
    match = _LOCATION.search(str(state.get("look") or state.get("observation") or ""))
    return match.group(1) if match else ""


def _things_in_view(valid_actions: Sequence[str]) -> list[str]:
    return sorted({m.group(1) for a in valid_actions if (m := _OBJECT.match(str(a)))})


def _carried(inventory: str) -> list[str]:
    return [m.group(1) for m in _CARRIED.finditer(inventory.split(":", 1)[1] if ":" in inventory else "")]


def _start_simulator(step_limit: int):
    try:
        from textworld_express import TextWorldExpressEnv  # optional: textworld_express (the envs extra)
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(
            "The TextWorld-Express adapter needs the `envs` extra: "
            "pip install 'rbdspy[envs]' (textworld-express==1.1.0)."
        ) from exc
    if shutil.which("java") is None:  # pragma: no cover - depends on the machine
        raise RuntimeError(
            "TextWorld-Express runs on the JVM: install Java 11+ (e.g. apt-get install default-jre-headless)."
        )
    return TextWorldExpressEnv(envStepLimit=step_limit)


class TextWorldExpress(EnvironmentBase):
    """TextWorld-Express games with their train/dev/test seeds and gold paths.

    Args:
        games: the games `task_types()` offers (default: all eight the package ships).
        params: per-game generation parameters, e.g.
            `{"cookingworld": "numLocations=3,numIngredients=2,numDistractorItems=2,includeDoors=0"}`
            (default: the package's defaults, which for cookingworld and coin mean 11 rooms).
        max_admissible: cap on the admissible actions shown per step.
        step_limit: moves after which an episode ends.
        shorten_gold: cut the wandering gold paths of coin and twc down to a minimal winning
            path (see `gold_path`).
        gold_cache: a JSON file that pins gold paths per task id (see `gold_cache.py`); read
            if present, extended as new paths are generated.
    """

    name = NAME
    max_score = 1.0
    language = TEXTWORLD_LANGUAGE

    def __init__(
        self,
        games: Sequence[str] | None = None,
        params: Mapping[str, str] | None = None,
        max_admissible: int = 60,
        step_limit: int = 10_000,
        shorten_gold: bool = True,
        gold_cache: str | Path | None = None,
    ):
        self._env = _start_simulator(step_limit)
        self._server = self._env.server
        known = [str(g) for g in self._server.getGameNames()]
        if games is not None:
            unknown = [g for g in games if g not in known]
            if unknown:
                raise ValueError(f"unknown TextWorld-Express game(s) {unknown}; known: {', '.join(known)}")
        self._games = list(games) if games is not None else known
        self.params = dict(params or {})
        bad = [g for g in self.params if g not in known]
        if bad:
            raise ValueError(f"params given for unknown game(s) {bad}; known: {', '.join(known)}")
        self.max_admissible = max_admissible
        self.step_limit = step_limit
        self.shorten_gold = shorten_gold
        self.gold_cache = GoldCache(gold_cache) if gold_cache is not None else None
        self._loaded: tuple[str, str] | None = None
        self._seeds: dict[tuple[str, str], dict[str, list[int]]] = {}
        self._gold: dict[str, list[str]] = {}
        self._descriptions: dict[str, str] = {}
        self._current: TaskRef | None = None
        self._state: dict = {}
        self._moves = 0

    # ---- tasks ---------------------------------------------------------------------------

    def task_types(self) -> list[str]:
        return list(self._games)

    def _load(self, game: str, params: str) -> None:
        if self._loaded != (game, params):
            message = self._server.load(game, params)
            if message:
                self._loaded = None  # the simulator now holds no game: reload on next use
                raise ValueError(f"TextWorld-Express rejected params {params!r} for {game}: {message}")
            self._loaded = (game, params)

    def seeds(self, game: str, params: str | None = None) -> dict[str, list[int]]:
        """The game's seeds per split (cached)."""
        params = self.params.get(game, "") if params is None else params
        key = (game, params)
        if key not in self._seeds:
            self._check_types([game])
            self._load(game, params)
            self._seeds[key] = {
                "train": [int(s) for s in self._server.getSeedsTrain()],
                "dev": [int(s) for s in self._server.getSeedsDev()],
                "test": [int(s) for s in self._server.getSeedsTest()],
            }
        return self._seeds[key]

    def tasks(self, split: Split, task_types: Sequence[str] | None = None, limit: int | None = None) -> list[TaskRef]:
        split = self._check_split(split)
        groups = []
        for game in self._check_types(task_types):
            params = self.params.get(game, "")
            groups.append(
                [
                    TaskRef(env=NAME, task_type=game, split=split, variation=s, params=params)
                    for s in self.seeds(game, params)[split]
                ]
            )
        return interleave(groups, limit)

    def _task(self, task: TaskRef | str) -> TaskRef:
        ref = super()._task(task)
        if ref.variation not in self.seeds(ref.task_type, ref.params)[ref.split]:
            owner = next(
                (s for s, seeds in self.seeds(ref.task_type, ref.params).items() if ref.variation in seeds), None
            )
            where = f"it is a {owner} seed" if owner else "it is in no split's seed list"
            raise ValueError(
                f"task {ref.id!r}: seed {ref.variation} is not a {ref.split} seed of {ref.task_type} ({where})"
            )
        return ref

    def _generate(self, ref: TaskRef, gold: bool) -> dict:
        self._load(ref.task_type, ref.params)
        return json.loads(str(self._server.generateNewGameJSON(ref.variation, ref.split, gold)))

    # ---- episodes ------------------------------------------------------------------------

    def reset(self, task: TaskRef | str, *, admissible: bool = True) -> Observation:
        ref = self._task(task)
        self._state = self._generate(ref, gold=False)
        self._current = ref
        self._moves = 0
        description = str(self._server.getTaskDescription())
        self._descriptions[ref.id] = description
        return self._observation(str(self._state.get("observation", "")), description, admissible)

    def step(self, action: str, *, admissible: bool = True) -> StepResult:
        if self._current is None:
            raise RuntimeError("TextWorldExpress.step() before reset(task): call reset first")
        action = (action or "").strip()
        self._moves += 1
        if not action:
            obs, valid = EMPTY_ACTION, False
        else:
            self._state = json.loads(str(self._server.stepJSON(action)))
            obs = str(self._state.get("observation", ""))
            valid = not obs.startswith(UNKNOWN_ACTION)
        return self._step_result(obs, valid, admissible)

    def parse_action(self, text: str) -> Act:
        """`text` as a typed action, by TextWorld-Express's forms (an action none fits is an act of
        its own, its template the text)."""
        act = _GRAMMAR.parse(text)
        return act if act is not None else Act(template=" ".join(str(text).split()).lower() or "?")

    def render_action(self, act: Act) -> str:
        return _GRAMMAR.render(act)

    def way_back(self, action: str, came_from: str) -> str | None:
        """A compass move undone by the opposite one ("move north" -> "move south")."""
        return opposite_move(action)

    def whereabouts(self) -> Whereabouts | None:
        """The room the game's look names, the objects its valid actions name (less what the
        player carries) and its inventory."""
        place = _location(self._state) if self._current is not None else ""
        if not place:
            return None
        carrying = _carried(str(self._state.get("inventory", "")))
        in_view = [t for t in _things_in_view(self._state.get("validActions", [])) if t not in carrying]
        return Whereabouts(place=place, in_view=in_view, carrying=carrying)

    def admissible_actions(self) -> list[str]:
        """The game's valid actions: information actions first, then sorted, capped."""
        if self._current is None:
            return []
        valid = sorted({str(a) for a in self._state.get("validActions", [])})
        first = [a for a in INFO_ACTIONS if a in valid]
        return (first + [a for a in valid if a not in INFO_ACTIONS])[: self.max_admissible]

    @property
    def success(self) -> bool:
        return self._current is not None and (bool(self._state.get("tasksuccess")) or self.score >= self.max_score)

    @property
    def score(self) -> float:
        return float(self._state.get("score", 0.0)) if self._current is not None else 0.0

    @property
    def done(self) -> bool:
        return self.success or bool(self._state.get("taskfailure")) or self._moves >= self.step_limit

    # ---- references ----------------------------------------------------------------------

    def gold_path(self, task: TaskRef | str) -> list[str]:
        """The game's gold action sequence (cached per task id). A first call for a task
        generates it, which ends any episode in progress: reset before stepping again.

        For coin and twc the package's gold agent explores by random walk with an unseeded
        JVM RNG (`new Random()`), so its paths wander and differ from run to run; with
        `shorten_gold` (default) those are cut down to a locally minimal winning path (see
        `_shorten`), which is what a gold trajectory should teach and makes reruns agree.
        """
        ref = self._task(task)
        key = f"{ref.id}#shortened" if self.shorten_gold and ref.task_type in RANDOM_WALK_GOLD else ref.id
        if ref.id not in self._gold and self.gold_cache is not None and key in self.gold_cache:
            self._gold[ref.id] = self.gold_cache.get(key)
        if ref.id not in self._gold:
            self._generate(ref, gold=True)
            self._current = None
            self._descriptions[ref.id] = str(self._server.getTaskDescription())
            gold = [str(a) for a in self._server.getGoldActionSequence()]
            if self.shorten_gold and ref.task_type in RANDOM_WALK_GOLD:
                gold = self._shorten(ref, gold)
            self._gold[ref.id] = gold
            if self.gold_cache is not None:
                self.gold_cache.put(key, gold)
        return list(self._gold[ref.id])

    # ---- gold-path shortening ---------------------------------------------------------------

    def _run(self, ref: TaskRef, actions: Sequence[str]) -> tuple[bool, list[str]]:
        """Plays `actions` (stopping at done); returns (won, location after each action played,
        with the start location first)."""
        self.reset(ref, admissible=False)
        locations = [_location(self._state)]
        for action in actions:
            if self.step(action, admissible=False).done:
                locations.append(_location(self._state))
                break
            locations.append(_location(self._state))
        won = self.success
        self._current = None
        return won, locations

    def _shorten(self, ref: TaskRef, gold: list[str]) -> list[str]:
        """A locally minimal winning path from a wandering one, each cut confirmed by replay:
        remove detours (the steps between two visits of the same room, longest first), then
        single steps, until nothing more can go. Deterministic given its input; falls back to
        the original path if that does not win."""
        won, locations = self._run(ref, gold)
        if not won:
            return gold
        path = gold[: len(locations) - 1]  # the steps after the win are not needed
        changed = True
        while changed:
            changed = False
            spans = sorted(
                (
                    (i, j)
                    for i in range(len(locations))
                    for j in range(i + 1, len(locations))
                    if locations[i] and locations[i] == locations[j]
                ),
                key=lambda span: (span[0] - span[1], span[0]),
            )
            for i, j in spans:
                candidate = path[:i] + path[j:]
                ok, cand_locations = self._run(ref, candidate)
                if ok:
                    path, locations, changed = candidate[: len(cand_locations) - 1], cand_locations, True
                    break
            if changed:
                continue
            for i in range(len(path)):
                candidate = path[:i] + path[i + 1 :]
                ok, cand_locations = self._run(ref, candidate)
                if ok:
                    path, locations, changed = candidate[: len(cand_locations) - 1], cand_locations, True
                    break
        return path

    def _load_for_description(self, ref: TaskRef) -> None:
        self._generate(ref, gold=False)
