"""ScienceWorld (scienceworld==1.2.3) behind the rbdspy `Environment` protocol.

One JVM per adapter: the `ScienceWorldEnv` (py4j gateway + Scala simulator, ~3 s to start) is
created once and every episode is a `load(task, variation)` on it (~50 ms), never a new process.
We talk to the simulator object (`env.server`) directly on the hot path: the package's
`ScienceWorldEnv.step` also computes the full valid-action list, the look and the inventory on
every step (~150 ms), which would make gold replays 25x slower than the simulator itself (~6 ms
a step).

Splits are ScienceWorld's own variation splits (`getVariationsTrain/Dev/Test` per task type), so
a task id names a variation that belongs to its split and `reset` refuses one that does not.
Success is ground truth: the simulator's score reaching 100. A negative score (e.g. focusing on
the wrong object) ends the episode as a failure, as in the package's own `step`.

Two things are not reproducible, and the rest of rbdspy allows for them: the gold path for a
few tasks differs between JVMs (pin it with `gold_cache`), and on a few tasks (power-component,
grow-fruit) the step at which a win registers varies by one between replays of the same actions,
which is why the dataset builder re-checks every record by replay.

Not thread-safe: one episode at a time per adapter; use one adapter per worker.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Sequence
from pathlib import Path

from rbdspy.envs.actions import Act
from rbdspy.envs.base import (
    ActionLanguage,
    EnvironmentBase,
    Observation,
    Split,
    StepResult,
    TaskRef,
    Whereabouts,
    interleave,
)
from rbdspy.envs.gold_cache import GoldCache
from rbdspy.envs.scienceworld_actions import FIXTURE_CLASSES, PUT_DOWN, ambiguity_choices, compact_actions
from rbdspy.envs.scienceworld_grammar import ScienceWorldGrammar, holders, thing_name

NAME = "scienceworld"
UNKNOWN_ACTION = "No known action matches that input."
EMPTY_ACTION = "No action given."
WORLD = "scienceworld/house"
ROOM_CLASS = "scienceworld.objects.location.Room"
# "This room is called the kitchen." / "This outside location is called the outside."
_PLACE = re.compile(r"is called the ([^.\n]+)\.")
# A door the free look lists: "A door to the hallway (that is closed)".
_DOOR = re.compile(r"A door to the ([^(\n]+?) \(that is (open|closed)\)")


_CARRIED = re.compile(r"^\s+(?:an?|the|some)\s+(.+?)\s*$", re.MULTILINE)


def reachable_only(combos: list[dict], reachable: set[str]) -> list[dict]:
    """The valid combinations whose objects the parser can resolve now: in reach (`reachable`,
    the ids of the referents it lists) or held (the objects of "put down"). The simulator's valid
    list also names things inside closed containers, and the parser refuses every such action."""
    held = {str(i) for c in combos if c.get("template_id") == PUT_DOWN for i in c.get("obj_ids", [])}
    known = reachable | held
    return [c for c in combos if all(str(i) in known for i in c.get("obj_ids", []))]


def carried_things(inventory: str) -> list[str]:
    """The things an inventory reply lists ("In your inventory, you see:\\n\\ta dove egg")."""
    return [m.group(1).strip() for m in _CARRIED.finditer(inventory or "")]


def things_in_view(referents: dict[str, str], types: dict[str, dict]) -> list[str]:
    """The things in reach by name (`referents`: id -> name, what the parser resolves now), less
    rooms and doors (the map's places and ways), the agent and the air (by their classes in
    `types`, the referent types table); sorted, once each."""
    fixture = {oid for entry in types.values() for oid in entry if _is_fixture(str(entry.get("desc", "")))}
    return sorted({name for oid, name in referents.items() if oid not in fixture})


def _is_fixture(java_class: str) -> bool:
    return any(part in java_class for part in FIXTURE_CLASSES)


def _start_simulator(step_limit: int):
    try:
        from scienceworld import ScienceWorldEnv  # optional: scienceworld (the envs extra)
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(
            "The ScienceWorld adapter needs the `envs` extra: pip install 'rbdspy[envs]' (scienceworld==1.2.3)."
        ) from exc
    if shutil.which("java") is None:  # pragma: no cover - depends on the machine
        raise RuntimeError(
            "ScienceWorld runs on the JVM: install Java 11+ (e.g. apt-get install default-jre-headless)."
        )
    return ScienceWorldEnv("", envStepLimit=step_limit)


class ScienceWorld(EnvironmentBase):
    """ScienceWorld's 30 task types with their train/dev/test variations and gold paths.

    Args:
        simplifications: ScienceWorld simplification string ("" = none, "easy" = all of
            teleportAction, selfWateringFlowerPots, openContainers, openDoors,
            noElectricalAction). Applies to every episode of this adapter.
        max_admissible: cap on the concrete admissible actions shown per step (action
            templates with OBJ placeholders are appended after them).
        step_limit: moves after which the simulator ends an episode (the agent's own
            `max_steps` is normally the tighter limit).
        gold_cache: a JSON file that pins gold paths per task id (see `gold_cache.py`: the
            oracle's paths vary between JVMs on some tasks); read if present, extended as new
            paths are generated.
    """

    name = NAME
    max_score = 100.0
    # Its actions that only look at the world (the dataset builder never drops one from a path).
    language = ActionLanguage(looks=("look around", "look at ", "examine ", "inventory", "task"))

    def __init__(
        self,
        simplifications: str = "",
        max_admissible: int = 60,
        step_limit: int = 10_000,
        gold_cache: str | Path | None = None,
    ):
        self.simplifications = simplifications
        self.max_admissible = max_admissible
        self.step_limit = step_limit
        self._env = _start_simulator(step_limit)
        self._server = self._env.server
        self._task_types: list[str] = list(self._server.getTaskNames())
        self._splits: dict[str, dict[str, list[int]]] = {}
        self._gold: dict[str, list[str]] = {}
        self._descriptions: dict[str, str] = {}
        self._current: TaskRef | None = None
        self._description = ""
        self._score = 0.0
        self._done = False
        self._last_obs = ""
        self.gold_cache = GoldCache(gold_cache) if gold_cache is not None else None
        self._grammar = ScienceWorldGrammar()

    # ---- tasks ---------------------------------------------------------------------------

    def task_types(self) -> list[str]:
        return list(self._task_types)

    def variations(self, task_type: str) -> dict[str, list[int]]:
        """The task type's variation indices per split (loads the task once, then cached)."""
        if task_type not in self._splits:
            self._check_types([task_type])
            self._load(task_type, 0, gold=False)
            self._current = None  # the loaded state is not an episode anyone reset
            self._splits[task_type] = {
                "train": list(self._server.getVariationsTrain()),
                "dev": list(self._server.getVariationsDev()),
                "test": list(self._server.getVariationsTest()),
            }
        return self._splits[task_type]

    def tasks(self, split: Split, task_types: Sequence[str] | None = None, limit: int | None = None) -> list[TaskRef]:
        split = self._check_split(split)
        groups = [
            [TaskRef(env=NAME, task_type=t, split=split, variation=v) for v in self.variations(t)[split]]
            for t in self._check_types(task_types)
        ]
        return interleave(groups, limit)

    def _task(self, task: TaskRef | str) -> TaskRef:
        ref = super()._task(task)
        if ref.params:
            raise ValueError(
                f"task {ref.id!r}: ScienceWorld tasks take no '?params' (simplifications are set on the adapter)"
            )
        if ref.variation not in self.variations(ref.task_type)[ref.split]:
            owner = next((s for s, vs in self.variations(ref.task_type).items() if ref.variation in vs), None)
            where = (
                f"it is in the {owner} split"
                if owner
                else f"it has {self._server.getTaskMaxVariations(ref.task_type)} variations"
            )
            raise ValueError(
                f"task {ref.id!r}: variation {ref.variation} is not a {ref.split} variation "
                f"of {ref.task_type} ({where})"
            )
        return ref

    def _load(self, task_type: str, variation: int, gold: bool) -> None:
        self._server.load(task_type, variation, self.simplifications, gold)

    # ---- episodes ------------------------------------------------------------------------

    def reset(self, task: TaskRef | str, *, admissible: bool = True) -> Observation:
        ref = self._task(task)
        # load() without gold-path generation is ~50 ms; with it (or the package's reset(),
        # which reloads with the same flags) it can take seconds on long tasks.
        self._load(ref.task_type, ref.variation, gold=False)
        self._current = ref
        self._score, self._done = 0.0, False
        self._description = str(self._server.getTaskDescription())
        self._descriptions[ref.id] = self._description
        self._last_obs = str(self._server.freeActionLook())  # a free action: no move is spent
        return self._observation(self._last_obs, self._description, admissible)

    def step(self, action: str, *, admissible: bool = True) -> StepResult:
        if self._current is None:
            raise RuntimeError("ScienceWorld.step() before reset(task): call reset first")
        action = (action or "").strip()
        if not action:
            obs, valid = EMPTY_ACTION, False
        else:
            obs = str(self._server.step(action))
            valid = not obs.startswith(UNKNOWN_ACTION)
        self._score = float(int(round(100 * self._server.getScore())))
        moves = int(self._server.getNumMoves())
        self._done = bool(self._server.getCompleted()) or self._score < 0 or moves >= self.step_limit
        self._last_obs = obs
        return self._step_result(obs, valid, admissible)

    def admissible_actions(self) -> list[str]:
        """A compact list of actions valid now (see `scienceworld_actions`), or the numbers of
        the options when the last action was ambiguous."""
        if self._current is None:
            return []
        choices = ambiguity_choices(self._last_obs)
        if choices:
            return choices
        combos = json.loads(str(self._server.getValidActionObjectCombinationsJSON()))["validActions"]
        types = json.loads(str(self._server.getPossibleObjectReferentTypesLUTJSON()))
        classes = {int(tid): str(entry.get("desc", "")) for tid, entry in types.items()}
        reachable = set(json.loads(str(self._server.getPossibleObjectReferentLUTJSON())))
        return compact_actions(
            reachable_only(combos, reachable), classes, self._description, max_actions=self.max_admissible
        )

    @property
    def success(self) -> bool:
        return self._current is not None and self._score >= self.max_score

    @property
    def score(self) -> float:
        return self._score

    @property
    def done(self) -> bool:
        return self._done

    def world_of(self, task: TaskRef | str) -> str:
        """Every task is played in the same house (rooms, doors and fixed appliances); the
        simplifications change what the house allows, so they name a world of their own."""
        self._task(task)
        return f"{WORLD}?{self.simplifications}" if self.simplifications else WORLD

    def answer_in(self, action: str) -> str | None:
        """ "focus on X" gives X as the task's answer: a wrong one ends the episode as a failure."""
        return self._grammar.answer(self.parse_action(action))

    def parse_action(self, text: str) -> Act:
        """`text` as a typed action (`scienceworld_grammar`): the simulator's template and the
        canonical names of its things."""
        return self._grammar.parse(text)

    def render_action(self, act: Act) -> str:
        return self._grammar.render(act)

    def kind_of(self, task: TaskRef | str) -> str:
        """Its task type: every variation of one asks for the same kind of thing."""
        return self._task(task).task_type

    def way_out(self, visited: Sequence[str]) -> str | None:
        """Through the first door the free look lists to a room not in `visited`, else through the
        door to the room of `visited` the agent was in longest ago: "go to X" where it is open,
        "open door to X" where it is shut (no move is spent finding out)."""
        if self._current is None:
            return None
        doors = {
            room.strip().lower(): (room.strip(), state)
            for room, state in _DOOR.findall(str(self._server.freeActionLook()))
        }
        order = [place.lower() for place in visited]
        fresh = [key for key in doors if key not in order]
        back = sorted((key for key in doors if key in order), key=order.index)
        if not (fresh or back):
            return None
        room, state = doors[(fresh or back)[0]]
        return f"go to {room}" if state == "open" else f"open door to {room}"

    def whereabouts(self) -> Whereabouts | None:
        """The room the simulator's free look names, the objects in reach there and the
        inventory (free actions: no move is spent)."""
        if self._current is None:
            return None
        look = str(self._server.freeActionLook())
        place = _PLACE.search(look)
        if place is None:
            return None
        referents = json.loads(str(self._server.getPossibleObjectReferentLUTJSON()))
        types = json.loads(str(self._server.getPossibleObjectReferentTypesLUTJSON()))
        self._know_rooms(types)
        rooms = self._grammar.rooms
        carrying = [thing_name(t, rooms) for t in carried_things(str(self._server.freeActionInventory()))]
        in_view = sorted({thing_name(t, rooms) for t in things_in_view(referents, types)} - set(carrying))
        inside = holders(look)
        return Whereabouts(place=place.group(1).strip(), in_view=in_view, carrying=carrying, inside=inside)

    def _know_rooms(self, types: dict[str, dict]) -> None:
        """The house's rooms, from the simulator's referent types: a thing named as being in one
        ("cup in art studio") is named without it."""
        rooms = {
            str(name)
            for entry in types.values()
            if entry.get("desc") == ROOM_CLASS
            for k, name in entry.items()
            if k != "desc"
        }
        if rooms - set(self._grammar.rooms):
            self._grammar = ScienceWorldGrammar(sorted(rooms | set(self._grammar.rooms)))

    # ---- references ----------------------------------------------------------------------

    def gold_path(self, task: TaskRef | str) -> list[str]:
        """ScienceWorld's gold action sequence for the task (generated by the simulator's own
        oracle when loading; cached per task id). A first call for a task loads it, which ends
        any episode in progress: reset before stepping again."""
        ref = self._task(task)
        key = self._cache_key(ref)
        if ref.id not in self._gold and self.gold_cache is not None and key in self.gold_cache:
            self._gold[ref.id] = self.gold_cache.get(key)
        if ref.id not in self._gold:
            self._load(ref.task_type, ref.variation, gold=True)
            self._current = None
            self._descriptions[ref.id] = str(self._server.getTaskDescription())
            self._gold[ref.id] = [str(a) for a in self._server.getGoldActionSequence()]
            if self.gold_cache is not None:
                self.gold_cache.put(key, self._gold[ref.id])
        return list(self._gold[ref.id])

    def _cache_key(self, ref: TaskRef) -> str:
        # Simplifications change the gold path (e.g. no door opening with openDoors).
        return f"{ref.id}#{self.simplifications}" if self.simplifications else ref.id

    def _load_for_description(self, ref: TaskRef) -> None:
        self._load(ref.task_type, ref.variation, gold=False)
