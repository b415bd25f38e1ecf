"""The one registry of environments: each name's adapter, aliases, task sets and capabilities.

Why one: an environment used to be named in eight places over three files (the names `make_env`
takes, its aliases, the lazy class attributes, the names the CLI takes and its help, which task
sets it serves, which options open them, what a world seed or a pinned gold path applies to).
Now adding an environment is its adapter module and one `EnvEntry` in `ENTRIES`; `make_env`,
`rbdspy.envs.ENV_NAMES`, the `rbdspy.envs.<AdapterClass>` attributes, `task_sets` and the CLI's
`--env` all read this table.

An adapter is named by its import path ("rbdspy.envs.scienceworld:ScienceWorld") and imported only
when asked for, so `import rbdspy.envs` works without the simulators (the `envs` extra) installed.
The capabilities an entry declares are checked against its adapter class by
`rbdspy.envs.conformance` and tests/envs/test_registry.py.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rbdspy.envs.capabilities import (
    Answers,
    HostsTasks,
    KindsOfTask,
    LessonTruth,
    NamesPlaces,
    OracleFacts,
    PersistentWorlds,
    Quests,
    ShowsActions,
    StatusLine,
    TypedActions,
    Understands,
    WaysBack,
    WaysOut,
)


@dataclass(frozen=True)
class TaskSet:
    """One named task set (`rbdspy bench --task-set`) as an environment serves it: the task types
    a stream draws from, in turn, and the options its adapter is opened with."""

    task_types: tuple[str, ...]
    options: Mapping[str, Any] = field(default_factory=dict)
    summary: str = ""  # a few words for `--task-set`'s help ("every task in a world of its own")


@dataclass(frozen=True)
class WorldSeeds:
    """How a world is picked by seed (`--world-seed`): the adapter option that takes the seeds (as a
    tuple of one) and the seed used when none is given."""

    option: str
    default: int


@dataclass(frozen=True)
class EnvEntry:
    """One environment, as everything outside its adapter knows it.

    Args:
        name: the name `make_env`, `--env`, task ids and records use ("scienceworld").
        adapter: the adapter class, as "module:Class" (imported on first use) or the class itself.
        summary: a few words for `--env`'s help ("small TextWorld-Express games"); "" for none.
        aliases: other spellings `make_env` and `--env` take ("sw").
        renamed: old spellings refused with the name to use instead ("house" for textworld).
        capabilities: the capability protocols the adapter implements (`rbdspy.envs.capabilities`).
        gold_paths: whether `gold_path` gives a path that wins (the conformance kit replays it).
        task_sets: the task sets it serves, by name.
        demo_set: the task set `rbdspy demo` plays.
        demo_pick: "module:function" choosing the demo's tasks (`fn(env, n_tasks) -> ids`); None:
            one task of each type in turn.
        demo_trusts_outcome: whether the demo labels each task by the environment's outcome
            instead of the judge, whose threshold was chosen on other environments.
        world_seeds: how `--world-seed` picks a world, or None where it applies to none.
        pins_gold: whether a run pins the gold paths in a file (the `gold_cache` option): they
            differ between simulator starts.
    """

    name: str
    adapter: str | Callable[..., Any]
    summary: str = ""
    aliases: tuple[str, ...] = ()
    renamed: tuple[str, ...] = ()
    capabilities: frozenset[type] = frozenset()
    gold_paths: bool = True
    task_sets: Mapping[str, TaskSet] = field(default_factory=dict)
    demo_set: str = "demo"
    demo_pick: str | None = None
    demo_trusts_outcome: bool = False
    world_seeds: WorldSeeds | None = None
    pins_gold: bool = False

    @property
    def class_name(self) -> str:
        """The adapter class's name, without importing it ("ScienceWorld")."""
        if isinstance(self.adapter, str):
            return self.adapter.rpartition(":")[2]
        return self.adapter.__name__

    def factory(self) -> Callable[..., Any]:
        """The adapter class (its module imported now; its simulator only when it is constructed)."""
        return _load(self.adapter) if isinstance(self.adapter, str) else self.adapter

    def task_set(self, name: str) -> TaskSet:
        if name not in self.task_sets:
            offered = ", ".join(self.task_sets) or "none"
            raise ValueError(f"task set {name!r} has no {self.name} tasks; {self.name} plays {offered}")
        return self.task_sets[name]


def _load(path: str) -> Any:
    """The object `path` ("package.module:name") names, its module imported now."""
    module, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module), attribute)


def load_function(path: str) -> Callable[..., Any]:
    """The function an entry names by "module:function" (`EnvEntry.demo_pick`)."""
    return _load(path)


# ---- the entries ---------------------------------------------------------------------------------

# TextWorld-Express games made small (one to three rooms, no distractors), a handful of gold steps
# each (twc 3, coin 1-4, cookingworld ~10), so that a 1.5B local model finishes some of them within
# a demo's step limit.
TWX_DEMO_PARAMS = {
    "twc": "numLocations=1,numItemsToPutAway=1,includeDoors=0",
    "coin": "numLocations=3,numDistractorItems=0,includeDoors=0",
    "cookingworld": "numLocations=1,numIngredients=1,numDistractorItems=0,includeDoors=0",
}
# "lift" is a stream where memory has room to help: games the bare agent wins sometimes but not
# always (one it never wins gives memory no success to learn from, one it always wins nothing to
# lift), where a strategy learned on one variation applies to the next. Coin in four rooms behind
# closed doors, in 15 steps, is such a game for the bare 1.5B agent, and every game asks for the
# same skills (open the door, go through, look, take the coin). ScienceWorld's find-* types serve
# the lift set there. Measured:
# docs/results/memory.md#a-stream-where-memory-has-room-to-help-benchmarksstream_pilotpy
LIFT_TWX_PARAMS = {"coin": "numLocations=4,numDistractorItems=0,includeDoors=1"}
# ScienceWorld task types whose gold paths are short enough for a demo's step budget.
SW_DEMO_TYPES = ("find-living-thing", "find-plant", "find-animal")
# ScienceWorld's house stream (`--env scienceworld --task-set house`): every task is played in the
# same house (rooms, doors, fixed appliances; the start room varies), over task types whose gold
# paths are short and cross rooms, so that where things are and which door leads where carry over.
# Each asks for one thing and commits it with "focus on" (power-component, a wiring puzzle, and
# boil are left to the task-type benchmarks: their gold paths are long or puzzles).
SW_HOUSE_TYPES = (
    "find-non-living-thing",
    "find-living-thing",
    "find-plant",
    "find-animal",
    "lifespan-longest-lived",
    "lifespan-shortest-lived",
)
# The web stream's MiniWoB++ types (`--env miniwob --task-set web`), chosen on train seeds only:
# every candidate type where a user's ReAct shown one made-up form (`--agent react-starter`) won
# 10-70% of its train pilot (1 or 2 of 3 seeds; types at 0 or 3 of 3 played on 3 more seeds),
# docs/bench/web-pilot-starter-local; none of the held-out types (`miniwob_tasks.HELD_OUT_TYPES`).
WEB_TYPES = (
    "click-button",
    "click-link",
    "click-option",
    "click-checkboxes",
    "click-widget",
    "focus-text-2",
    "unicode-test",
    "click-dialog",
    "click-tab-2",
    "enter-text",
)
# The TextWorld house: the world the house sets play unless --world-seed picks another
# (`textworld_env.DEFAULT_WORLD`), and the task type of its shuffled control (`textworld_env.SHUFFLED`).
HOUSE_WORLD = 1
SHUFFLED_HOUSES = "shuffled"


def _twx_games(params: Mapping[str, str], summary: str) -> TaskSet:
    return TaskSet(tuple(params), {"games": list(params), "params": dict(params)}, summary)


# The order here is the order the CLI lists them in, the demo's default first: persistent TextWorld
# worlds (the demo plays quests in one of them, the house, that fetch the same thing, so a later
# quest is served the route an earlier one took; the bench plays the task sets "house": quests in
# one world that persists; "house-shuffled": every task in a world of its own; "house-starts" and
# "house-starts-shuffled": the same, each quest starting in a room of its own instead of the
# world's start room), TextWorld-Express, ScienceWorld, the web. A task set with no --env is played in the
# first environment here that serves it.
ENTRIES: tuple[EnvEntry, ...] = (
    EnvEntry(
        name="textworld",
        adapter="rbdspy.envs.textworld_env:TextWorldHouses",
        summary="persistent TextWorld worlds: the house",
        aliases=("tw",),
        renamed=("house",),
        capabilities=frozenset(
            {
                TypedActions,
                NamesPlaces,
                PersistentWorlds,
                KindsOfTask,
                WaysBack,
                StatusLine,
                Understands,
                LessonTruth,
                OracleFacts,
                Quests,
                HostsTasks,
                ShowsActions,
            }
        ),
        task_sets={
            "house": TaskSet((str(HOUSE_WORLD),), {"shuffled": False}, "quests in one persistent world"),
            "house-shuffled": TaskSet((SHUFFLED_HOUSES,), {"shuffled": True}, "every task in a world of its own"),
            "house-starts": TaskSet(
                (str(HOUSE_WORLD),),
                {"shuffled": False, "starts": True},
                "house, each quest starting in a room of its own",
            ),
            "house-starts-shuffled": TaskSet(
                (SHUFFLED_HOUSES,), {"shuffled": True, "starts": True}, "house-starts, every task in a world of its own"
            ),
        },
        demo_set="house",
        demo_pick="rbdspy.envs.task_sets:house_demo_tasks",
        demo_trusts_outcome=True,
        world_seeds=WorldSeeds(option="worlds", default=HOUSE_WORLD),
    ),
    EnvEntry(
        name="twx",
        adapter="rbdspy.envs.twx:TextWorldExpress",
        summary="small TextWorld-Express games",
        aliases=("textworld-express", "textworld_express"),
        capabilities=frozenset({TypedActions, NamesPlaces, WaysBack}),
        task_sets={
            "demo": _twx_games(TWX_DEMO_PARAMS, "small twc, coin and cooking games"),
            "lift": _twx_games(LIFT_TWX_PARAMS, "coin games the bare agent wins sometimes"),
        },
    ),
    EnvEntry(
        name="scienceworld",
        adapter="rbdspy.envs.scienceworld:ScienceWorld",
        aliases=("sw",),
        capabilities=frozenset({TypedActions, NamesPlaces, PersistentWorlds, KindsOfTask, Answers, WaysOut}),
        task_sets={
            "demo": TaskSet(SW_DEMO_TYPES, summary="find tasks with short gold paths"),
            "lift": TaskSet(SW_DEMO_TYPES, summary="as demo"),
            "house": TaskSet(SW_HOUSE_TYPES, summary="six find and lifespan types in its one house"),
        },
        pins_gold=True,
    ),
    EnvEntry(
        name="miniwob",
        adapter="rbdspy.envs.miniwob:MiniWoB",
        summary="MiniWoB++ web pages in headless Chromium",
        aliases=("web", "miniwob++"),
        capabilities=frozenset({TypedActions, NamesPlaces, KindsOfTask, ShowsActions}),
        gold_paths=False,
        task_sets={"web": TaskSet(WEB_TYPES, summary=f"{len(WEB_TYPES)} page types chosen on train seeds")},
        demo_set="web",
    ),
)
# The order `--task-set` lists the sets in; a set an entry serves that is not here comes after them.
TASK_SET_ORDER = ("demo", "lift", "house", "house-shuffled", "house-starts", "house-starts-shuffled", "web")

# ---- lookups ---------------------------------------------------------------------------------------

ENV_NAMES: tuple[str, ...] = tuple(entry.name for entry in ENTRIES)
_BY_NAME: dict[str, EnvEntry] = {spelling: entry for entry in ENTRIES for spelling in (entry.name, *entry.aliases)}
_RENAMED: dict[str, str] = {old: entry.name for entry in ENTRIES for old in entry.renamed}


def entry(name: str) -> EnvEntry:
    """The entry `name` (or an alias, any case) names. A ValueError in one line otherwise, naming
    the environments, or the spelling to use for an old one ("house" is a world of textworld)."""
    key = str(name).strip().lower()
    if key in _BY_NAME:
        return _BY_NAME[key]
    if key in _RENAMED:
        raise ValueError(f"{name!r} is now spelled {_RENAMED[key]}")  # one line, even in an 80-column box
    raise ValueError(f"unknown environment {name!r}; choose one of {', '.join(ENV_NAMES)}")


def registered(name: str) -> EnvEntry | None:
    """The entry of the environment an adapter calls itself (`env.name`), or None for one not here."""
    return _BY_NAME.get(str(name).strip().lower())


def entry_for_class(class_name: str) -> EnvEntry | None:
    """The entry whose adapter class is called `class_name` ("ScienceWorld"), or None."""
    return next((e for e in ENTRIES if e.class_name == class_name), None)


def task_set_names() -> tuple[str, ...]:
    """Every task set some environment serves, in `TASK_SET_ORDER`."""
    served = dict.fromkeys(name for e in ENTRIES for name in e.task_sets)
    return tuple(sorted(served, key=lambda n: TASK_SET_ORDER.index(n) if n in TASK_SET_ORDER else len(served)))


def declaring(capability: type) -> tuple[str, ...]:
    """The environments whose entries declare `capability`, in registry order."""
    return tuple(e.name for e in ENTRIES if capability in e.capabilities)


def with_world_seeds() -> tuple[str, ...]:
    """The environments `--world-seed` applies to."""
    return tuple(e.name for e in ENTRIES if e.world_seeds is not None)


def task_set_help() -> str:
    """`--task-set`'s help: every task set, with the environments that serve it, the one it is
    played in without --env first ("house (textworld: quests in one persistent world; scienceworld:
    six find and lifespan types in its one house)")."""
    parts = []
    for name in task_set_names():
        served = [(e.name, e.task_sets[name].summary) for e in ENTRIES if name in e.task_sets]
        parts.append(f"{name} ({'; '.join(f'{env}: {summary}' if summary else env for env, summary in served)})")
    return " | ".join(parts) + ". Without --env, a set is played in the first environment named."


def env_help() -> str:
    """`--env`'s help: every name, with its summary ("textworld (persistent TextWorld worlds: the
    house) | twx (small TextWorld-Express games) | scienceworld")."""
    return " | ".join(f"{e.name} ({e.summary})" if e.summary else e.name for e in ENTRIES)
