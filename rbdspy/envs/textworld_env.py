"""Persistent TextWorld worlds behind the rbdspy `Environment` protocol.

A task id names the world and the quest: `textworld/<world-seed>/<split>/<quest>` (quest `i` of
that split in the world's catalogue, see `textworld_house`). Every quest of a world starts from
the same state in the same start room, as a website has one home page; the description is the
quest's objective ("Put the burger on the plate."), the gold path its walkthrough.

Two ways of serving tasks (`task_types()`):

- `worlds=(seed, ...)`: the quests of those worlds; the task type is the world seed ("house").
- `shuffled=True`: the same quest recipe, but every task in a world of its own (the negative
  control "house-shuffled": nothing about one world carries over to the next). Task type
  "shuffled"; task `i` of a split is the first quest of that split in world
  `SHUFFLED_BASE + SPLIT_OFFSET[split] + i`.
- `starts=True` (with either): the same quests, each starting in a room of its own instead of the
  world's start room ("house-starts" and its control "house-starts-shuffled", see
  `textworld_house.StartsCatalogue`). Task ids carry `?start=cycle`
  (`textworld/1/dev/3?start=cycle`); the world they name is the same, so `world_of` is too.

A world holds as many quests as its catalogue reaches (`HouseCatalogue.fill`); `hosted` says which
of a pool's tasks it can serve, so that a stream asking for more is refused before it starts.

Success is the game's `won`. A step is a few milliseconds. Admissible actions are the game's own,
ordered (actions that change the world first, then look/inventory, then examine) and capped.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from pathlib import Path

from rbdspy.envs.actions import Act, TemplateGrammar
from rbdspy.envs.base import EnvironmentBase, Observation, Split, StepResult, TaskRef, Whereabouts, interleave
from rbdspy.envs.capabilities import ActionExample
from rbdspy.envs.textworld_compass import TEXTWORLD_LANGUAGE, opposite_move, textworld_grammar
from rbdspy.envs.textworld_facts import HouseFacts, house_facts, oracle_items
from rbdspy.envs.textworld_house import (
    HouseCatalogue,
    HouseQuest,
    HouseSpec,
    StartsCatalogue,
    _textworld,
    catalogue_position,
    entity_names,
    split_counts,
    start_game,
)
from rbdspy.envs.textworld_truth import lesson_truth
from rbdspy.types import Experience

NAME = "textworld"
SHUFFLED = "shuffled"
DEFAULT_WORLD = 1
SHUFFLED_BASE = 1_000_000
SPLIT_OFFSET = {"train": 0, "dev": 100_000, "test": 200_000}
# Quests a split offers per world: 20 build and 40 measured tasks (a world must host them all,
# `FULL_POOL_WORLDS`).
DEFAULT_POOL = {"train": 20, "dev": 40, "test": 6}
# The parameter of a task id whose quest starts in a room of its own (`starts=True`).
STARTS_PARAM = "start=cycle"
# Worlds whose catalogues hold every quest of DEFAULT_POOL (a 60-task stream of 20 built and 40
# measured fits) with walkthroughs of the spec's own 2-4 actions, so a stream there is as hard as
# one in the default world: what a refused stream is offered instead. Other worlds hold the pool
# only with longer quests (`TIERS`), a harder stream, if at all. Measured:
# docs/guides/bench.md#persistent-worlds-where-experience-can-carry-over
FULL_POOL_WORLDS = (1, 2, 4, 5, 6, 9, 10, 12, 16, 17, 18)
INFO_ACTIONS = ("look", "inventory")
# The interpreter's prompt and status bar ("\n>   ...   -= Canteen =-0/3") end every reply.
_PROMPT_TAIL = re.compile(r"\n>[^\n]*$")
_ROOM = re.compile(r"-=\s*(.+?)\s*=-")
_EXAMINE = re.compile(r"^examine\s+(.+)$")
_CARRIED = re.compile(r"^\s*(?:an?|the|some)\s+(.+?)\s*$", re.MULTILINE)


def things_examinable(admissible: Sequence[str]) -> list[str]:
    """The things the game lets the player examine ("examine mug"): what is in view or in hand."""
    found = dict.fromkeys(m.group(1).strip().lower() for a in admissible if (m := _EXAMINE.match(a.strip().lower())))
    return list(found)


def carried_things(inventory: str) -> list[str]:
    """The things an inventory reply lists ("You are carrying:\\n  a cashew")."""
    listing = inventory.split(":", 1)[1] if ":" in inventory else ""
    return [m.group(1).lower().rstrip(".").strip() for m in _CARRIED.finditer(listing)]


@functools.lru_cache(maxsize=8)
def world_facts(seed: int, spec: HouseSpec | None = None) -> HouseFacts:
    """The facts of world `seed` (map, where things are) without opening an environment: what a
    metric checks a lesson's claims against (the world is generated from its seed, no game
    compiled)."""
    world = HouseCatalogue(seed, spec or HouseSpec()).world
    return house_facts(world, entity_names(world, seed))


def clean_feedback(text: str) -> str:
    """The game's reply without the interpreter's trailing prompt and status bar."""
    return _PROMPT_TAIL.sub("", str(text or "")).strip()


# How the game's parser answers words it did not understand: Inform 7's parser errors (its
# Standard Rules, "parser error internal rule"), its questions for what a command left out, and
# the adapter's own reply to an empty action. Any other reply to an action outside the admissible
# list ("You already have that.", "You can't go that way.") answers an action the game understood
# that changed nothing.
_PARSER_REFUSAL = re.compile(
    r"(?:I didn't understand|I only understood you as far as|That's not a verb I recogni[sz]e"
    r"|You can't see any such thing|You seem to have said too little|You can't use multiple objects"
    r"|You can only use multiple objects|I'm not sure what|That's not something you need to refer to"
    r"|That noun did not make sense|You excepted something|You can only do that to something animate"
    r"|You can't begin with a comma|You seem to want to talk to someone|I beg your pardon"
    r"|(?:What|Whom?) do you want|Which do you mean|No action given)"
)


def parser_refused(observation: str) -> bool:
    """Whether the game's reply says it did not understand the action (`_PARSER_REFUSAL`)."""
    return bool(_PARSER_REFUSAL.match(str(observation or "").strip()))


def world_label(seed: int) -> str:
    """How memory items and prompts name a world (an item holds in its own world only)."""
    return f"house {seed}"


def order_admissible(commands: Sequence[str]) -> list[str]:
    """Actions that change the world first (sorted), then look/inventory, then examine."""
    unique = sorted({str(c).strip() for c in commands if str(c).strip()})
    acting = [c for c in unique if c not in INFO_ACTIONS and not c.startswith("examine ")]
    return acting + [c for c in INFO_ACTIONS if c in unique] + [c for c in unique if c.startswith("examine ")]


class TextWorldHouses(EnvironmentBase):
    """Quests in persistent TextWorld worlds.

    Args:
        worlds: the world seeds whose quests are served (task types), default `(1,)`.
        shuffled: serve the shuffled-world stream instead (task type "shuffled").
        starts: start each quest in a room of its own (the house-starts streams).
        spec: how worlds and quests are made (`HouseSpec`).
        cache_dir: where catalogues and compiled games are kept (default: `RBDSPY_TEXTWORLD_CACHE`
            or ~/.cache/rbdspy/textworld).
        pool: how many quests each split offers per world (tasks(split) lists that many).
        max_admissible: cap on the admissible actions shown per step.
        step_limit: moves after which an episode ends.
    """

    name = NAME
    max_score = 1.0
    language = TEXTWORLD_LANGUAGE

    def __init__(
        self,
        worlds: Sequence[int] = (DEFAULT_WORLD,),
        shuffled: bool = False,
        starts: bool = False,
        spec: HouseSpec | None = None,
        cache_dir: str | Path | None = None,
        pool: dict[str, int] | None = None,
        max_admissible: int = 40,
        step_limit: int = 10_000,
    ):
        _textworld()  # a missing install fails here, with the fix
        worlds = list(worlds)
        bad = [w for w in worlds if isinstance(w, bool) or not isinstance(w, int) or w < 0]
        if bad or (not worlds and not shuffled):
            raise ValueError(f"worlds must be non-negative integer seeds (at least one); got {worlds!r}")
        self.worlds = worlds
        self.shuffled = shuffled
        self.starts = starts
        self.spec = spec or HouseSpec()
        self.cache_dir = cache_dir
        self.pool = {**DEFAULT_POOL, **(pool or {})}
        self.max_admissible = max_admissible
        self.step_limit = step_limit
        self._catalogues: dict[int, HouseCatalogue] = {}
        self._starts: dict[int, StartsCatalogue] = {}
        self._facts: dict[int, HouseFacts] = {}
        self._names: dict[int, dict[str, str]] = {}
        self._descriptions: dict[str, str] = {}
        self._game = None
        self._current: TaskRef | None = None
        self._state = None
        self._admissible_all: list[str] = []
        self._moves = 0
        self._won = False
        self._grammar: TemplateGrammar | None = None

    # ---- worlds and quests -------------------------------------------------------------------

    def task_types(self) -> list[str]:
        return [SHUFFLED] if self.shuffled else [str(w) for w in self.worlds]

    def catalogue(self, seed: int) -> HouseCatalogue:
        if seed not in self._catalogues:
            self._catalogues[seed] = HouseCatalogue(seed, self.spec, self.cache_dir)
        return self._catalogues[seed]

    def facts(self, seed: int) -> HouseFacts:
        """The facts of world `seed` (map, where things are), named as its games name them."""
        if seed not in self._facts:
            self._facts[seed] = house_facts(self.catalogue(seed).world, self.names(seed))
        return self._facts[seed]

    def names(self, seed: int) -> dict[str, str]:
        """What every entity of world `seed` is called in its games, by id ("r_3": "kitchen")."""
        if seed not in self._names:
            self._names[seed] = entity_names(self.catalogue(seed).world, seed)
        return self._names[seed]

    def starts_catalogue(self, seed: int) -> StartsCatalogue:
        if seed not in self._starts:
            self._starts[seed] = StartsCatalogue(self.catalogue(seed))
        return self._starts[seed]

    def quest(self, task: TaskRef | str) -> HouseQuest:
        ref = self._task(task)
        if ref.params == STARTS_PARAM:
            return self.starts_catalogue(int(ref.task_type)).quest(ref.split, ref.variation)
        return self.catalogue(int(ref.task_type)).quest(ref.split, ref.variation)

    def action_example(self) -> ActionExample:
        """A made-up quest in a made-up house (no generated world has it), in TextWorld's words: the
        thing is not where the episode begins, so the example looks for it through the exits
        (one room without it), takes it and carries it to where the task puts it."""
        hall = (
            "-= Hallway =-\nYou are in a hallway. You see a rug.\n"
            "There is an exit to the north. There is an exit to the east."
        )
        kitchen = (
            "-= Kitchen =-\nYou are in a kitchen. You see a counter. On the counter is a cup.\n"
            "There is an exit to the south."
        )
        pantry = (
            "-= Pantry =-\nYou are in a pantry. You see a shelf. On the shelf is a jar.\nThere is an exit to the west."
        )
        in_hall = ("go north", "go east", "take rug", "examine rug")
        in_kitchen = ("go south", "take cup from counter", "examine counter")
        in_pantry = ("go west", "take jar from shelf", "examine shelf")
        steps = (
            ("go north", kitchen, in_kitchen, "There is no jar here. I go through an exit to look for it."),
            ("go south", hall, in_hall, "The counter is here but the jar is not. I try another room."),
            ("go east", pantry, in_pantry, "I have not been east yet."),
            (
                "take jar from shelf",
                "You take the jar from the shelf.",
                ("go west", "examine shelf", "put jar on shelf"),
                "The jar is on the shelf here. I take it.",
            ),
            ("go west", hall, (*in_hall, "put jar on rug"), "The counter is in the kitchen, north of the hallway."),
            ("go north", kitchen, (*in_kitchen, "put jar on counter"), "The kitchen is north."),
            (
                "put jar on counter",
                "You put the jar on the counter.\n\nYour score has just gone up by one point.",
                (),
                "The counter is here and I carry the jar.",
            ),
        )
        return ActionExample(
            task="Put the jar on the counter.",
            observation=hall,
            admissible=in_hall,
            steps=tuple((action, answer) for action, answer, _, _ in steps),
            listed=tuple(listed for _, _, listed, _ in steps),
            thoughts=tuple(thought for *_, thought in steps),
        )

    def world_of(self, task: TaskRef | str) -> str:
        """Every quest of a world starts from its state (in its start room, or with `starts` in a
        room of its own): "textworld/<seed>", whatever the room."""
        return f"{NAME}/{self._task(task).task_type}"

    def kind_of(self, task: TaskRef | str) -> str:
        """The quest's objective with the names of the world's things and rooms left out ("put the
        {} in the {}."): quests of one kind are done alike with other things."""
        ref = self._task(task)
        objective = " ".join(self.describe(ref).lower().split())
        names = sorted({n.lower() for n in self.names(int(ref.task_type)).values() if n}, key=len, reverse=True)
        for name in names:
            objective = re.sub(rf"(?<![a-z0-9]){re.escape(name)}(?![a-z0-9])", "{}", objective)
        return objective

    def task_facts(self, task: TaskRef | str) -> HouseFacts:
        """The facts of the task's world, its start the room the task starts in."""
        ref = self._task(task)
        seed = int(ref.task_type)
        if ref.params != STARTS_PARAM:
            return self.facts(seed)
        room = self.quest(ref).start
        return self.facts(seed).starting_in(self.names(seed).get(room, room))

    def oracle_items(self, task: TaskRef | str) -> list[dict[str, str]]:
        """The world's map (from the room the task starts in) and where every object and key is,
        as memory items (the ceiling for fact memory)."""
        ref = self._task(task)
        if ref.params != STARTS_PARAM:
            return self.world_items(int(ref.task_type))
        return oracle_items(self.task_facts(ref), world_label(int(ref.task_type)))

    def world_items(self, seed: int) -> list[dict[str, str]]:
        """The map and where things are in world `seed`, as memory items naming that world."""
        return oracle_items(self.facts(seed), world_label(seed))

    def lesson_truth(self, text: str, task: TaskRef | str, experience: Experience | None = None) -> dict[str, int]:
        """How many claims `text` (and an item's typed `experience`) make about the task's world,
        and how many are true."""
        return lesson_truth(text, self.task_facts(task), experience)

    def hosted(self, task_ids: Sequence[str]) -> list[str]:
        """The tasks among `task_ids` whose quests their worlds hold, each world's catalogue
        generated as far as they reach: a world may hold fewer quests than a split's pool lists.
        A shuffled stream's tasks (each the first quest of a split in a world of its own) are all
        served."""
        if self.shuffled:
            return list(task_ids)
        refs = [self._task(t) for t in task_ids]
        reach: dict[int, int] = {}
        for ref in refs:
            seed = int(ref.task_type)
            reach[seed] = max(reach.get(seed, 0), catalogue_position(ref.split, ref.variation) + 1)
        held = {seed: self.catalogue(seed).fill(n) for seed, n in reach.items()}
        return [r.id for r in refs if catalogue_position(r.split, r.variation) < held[int(r.task_type)]]

    def capacity_note(self, task_type: str) -> str:
        """What world `task_type` serves, in words, for a refusal: the quests it holds by split
        when its catalogue is known to end there, else the pool each split offers."""
        pool = self.pool
        offered = f"{pool['train']} train, {pool['dev']} dev and {pool['test']} test"
        if not task_type.isdigit():
            return f"the shuffled stream offers {offered} tasks"
        catalogue = self.catalogue(int(task_type))
        if not catalogue.exhausted:
            return f"world seed {task_type} offers {offered} quests"
        held = len(catalogue.quests())
        counts = split_counts(held)
        return f"world seed {task_type} holds {held} quests ({', '.join(f'{n} {s}' for s, n in counts.items())})"

    def capacity_hint(self, task_type: str) -> str:
        """What else a stream refused for world `task_type` could play: a world that holds the
        whole pool ("" when the world is not out of quests, only the pool is short)."""
        if not task_type.isdigit() or not self.catalogue(int(task_type)).exhausted:
            return ""
        return f"another --world-seed ({', '.join(map(str, FULL_POOL_WORLDS))} hold a 60-task stream)"

    @staticmethod
    def shuffled_world(split: str, index: int) -> int:
        return SHUFFLED_BASE + SPLIT_OFFSET[split] + index

    def tasks(self, split: Split, task_types: Sequence[str] | None = None, limit: int | None = None) -> list[TaskRef]:
        split = self._check_split(split)
        groups = []
        for kind in self._check_types(task_types):
            n = self.pool[split]
            if kind == SHUFFLED:
                seeds = [(self.shuffled_world(split, i), 0) for i in range(n)]
            else:
                seeds = [(int(kind), i) for i in range(n)]
            params = STARTS_PARAM if self.starts else ""
            groups.append(
                [TaskRef(env=NAME, task_type=str(s), split=split, variation=i, params=params) for s, i in seeds]
            )
        return interleave(groups, limit)

    def _task(self, task: TaskRef | str) -> TaskRef:
        ref = TaskRef.parse(task) if isinstance(task, str) else task
        if ref.env != NAME:
            raise ValueError(f"task {ref.id!r} belongs to environment {ref.env!r}, not {NAME!r}")
        if not ref.task_type.isdigit():
            raise ValueError(f"task {ref.id!r}: {ref.task_type!r} must be a world seed (a non-negative integer)")
        if ref.params not in ("", STARTS_PARAM):
            raise ValueError(f"task {ref.id!r}: the only parameter a house task takes is {STARTS_PARAM!r}")
        return ref

    # ---- episodes ----------------------------------------------------------------------------

    def _close_game(self) -> None:
        game, self._game = self._game, None
        if game is not None:
            game.close()

    def reset(self, task: TaskRef | str, *, admissible: bool = True) -> Observation:
        textworld = _textworld()
        ref = self._task(task)
        quest = self.quest(ref)
        self._close_game()
        infos = textworld.EnvInfos(admissible_commands=True, won=True, lost=True, description=True, inventory=True)
        self._game = start_game(self.catalogue(quest.world_seed).game_path(quest), infos)
        self._state = self._game.reset()
        self._current, self._moves, self._won = ref, 0, False
        self._grammar = textworld_grammar(
            self._state.get("command_templates") or (), self._state.get("typed_entities") or ()
        )
        self._admissible_all = order_admissible(self._state.admissible_commands or [])
        self._descriptions[ref.id] = quest.objective
        return self._observation(clean_feedback(self._state.description), quest.objective, admissible)

    def step(self, action: str, *, admissible: bool = True) -> StepResult:
        if self._current is None or self._game is None:
            raise RuntimeError("TextWorldHouses.step() before reset(task): call reset first")
        action = " ".join((action or "").split())
        self._moves += 1
        known = {a.lower() for a in self._admissible_all}
        if not action:
            observation, valid = "No action given.", False
        else:
            valid = action.lower() in known
            self._state, _, _ = self._game.step(action)
            observation = clean_feedback(self._state.feedback)
            self._won = self._won or bool(self._state.won)
            self._admissible_all = order_admissible(self._state.admissible_commands or [])
        return self._step_result(observation, valid, admissible)

    def understood(self, observation: str) -> bool:
        """Whether the game understood the action `observation` answers. A step's `valid` says
        whether the action was admissible; one that was not may still be understood and change
        nothing ("take book" with the book in hand: "You already have that.")."""
        return not parser_refused(observation)

    def admissible_actions(self) -> list[str]:
        return self._admissible_all[: self.max_admissible] if self._current is not None else []

    def status(self) -> Whereabouts | None:
        """Where the player is and what it carries (for the agent's status line and its repeat
        guard); None outside an episode. What is carried is the game's own inventory text, one
        entry, so the status line quotes it as the game writes it."""
        if self._current is None or self._state is None:
            return None
        room = _ROOM.search(str(self._state.description or ""))
        carrying = str(self._state.inventory or "").strip()
        carrying = carrying.split(":", 1)[1].strip().rstrip(".") if ":" in carrying else ""
        return Whereabouts(place=room.group(1).lower() if room else "", carrying=[carrying] if carrying else [])

    def way_back(self, action: str, came_from: str) -> str | None:
        """A compass move undone by the opposite one ("go north" -> "go south")."""
        return opposite_move(action)

    def parse_action(self, text: str) -> Act:
        """`text` as a typed action, by the game's own command templates (an action none fits is
        an act of its own, its template the text)."""
        act = self._grammar.parse(text) if self._grammar is not None else None
        return act if act is not None else Act(template=" ".join(str(text).split()).lower() or "?")

    def render_action(self, act: Act) -> str:
        return self._grammar.render(act) if self._grammar is not None else str(act)

    def whereabouts(self) -> Whereabouts | None:
        """The room the game's description names, the things the player may examine there that
        it does not carry, and what it carries."""
        status = self.status()
        if not status or not status.place:
            return None
        carrying = carried_things(str(self._state.inventory or ""))
        in_view = [t for t in things_examinable(self._admissible_all) if t not in carrying]
        return Whereabouts(place=status.place, in_view=in_view, carrying=carrying)

    @property
    def success(self) -> bool:
        return self._current is not None and self._won

    @property
    def score(self) -> float:
        return 1.0 if self.success else 0.0

    @property
    def done(self) -> bool:
        lost = bool(getattr(self._state, "lost", False)) if self._state is not None else False
        return self.success or lost or self._moves >= self.step_limit

    # ---- references --------------------------------------------------------------------------

    def gold_path(self, task: TaskRef | str) -> list[str]:
        return list(self.quest(task).walkthrough)

    def describe(self, task: TaskRef | str) -> str:
        ref = self._task(task)
        if ref.id not in self._descriptions:
            self._descriptions[ref.id] = self.quest(ref).objective
        return self._descriptions[ref.id]

    def close(self) -> None:
        self._close_game()
        self._current = None
