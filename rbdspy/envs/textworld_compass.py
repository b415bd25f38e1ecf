"""The TextWorld family's action grammar, shared by its adapters (TextWorld houses and
TextWorld-Express): how its actions and tasks are worded (`TEXTWORLD_LANGUAGE`), its typed actions
(`textworld_grammar`, from the game's own command templates and typed entities), and its compass
moves (houses: "go north"; TextWorld-Express: "move north") with the move that undoes one, which
the adapters name as the way back."""

from __future__ import annotations

import re
from collections.abc import Iterable

from rbdspy.envs.actions import TemplateGrammar
from rbdspy.envs.base import ActionLanguage

# A task is one imperative the game can do in one action ("Put the mug in the fridge." is done by
# "insert mug into fridge"), and a task's "go", "put" or "take" names no thing: they begin the
# game's actions whatever thing those are about.
TEXTWORLD_LANGUAGE = ActionLanguage(
    plain_verbs=frozenset({"go", "put", "take"}),
    imperative_tasks=True,
    verb_forms={"put": ("put", "insert", "place")},
    looks=("look", "examine ", "inventory", "task"),
)

_MOVE = re.compile(r"^(go|move)\s+(north|south|east|west|up|down)$")
_OPPOSITE = {"north": "south", "south": "north", "east": "west", "west": "east", "up": "down", "down": "up"}


def opposite_move(action: str) -> str | None:
    """The compass move that undoes `action`, in its own verb; None for any other action."""
    match = _MOVE.match(" ".join(action.lower().split()))
    return f"{match.group(1)} {_OPPOSITE[match.group(2)]}" if match else None


_TYPED_SLOT = re.compile(r"\{[a-z]+\}")
# TextWorld's entity type of a door (its `{d}` slots): what is opened, closed or unlocked on a way.
DOOR_TYPE = "d"
# The command templates every TextWorld game of the houses lists (its `command_templates`), slots as {}.
TEXTWORLD_TEMPLATES = (
    "close {}",
    "drop {}",
    "eat {}",
    "examine {}",
    "go east",
    "go north",
    "go south",
    "go west",
    "insert {} into {}",
    "inventory",
    "lock {} with {}",
    "look",
    "open {}",
    "put {} on {}",
    "take {}",
    "take {} from {}",
    "unlock {} with {}",
)
# TextWorld-Express writes its actions without templates: these are its forms.
TWX_FORMS = (
    "move {}",
    "open door to {}",
    "close door to {}",
    "open {}",
    "close {}",
    "take {}",
    "take {} from {}",
    "put {} in {}",
    "put {} on {}",
    "drop {}",
    "eat {}",
    "read {}",
    "examine {}",
    "look around",
    "inventory",
    "task",
    "cook {} in {}",
    "slice {} with {}",
    "chop {} with {}",
    "dice {} with {}",
    "prepare meal",
)


def textworld_grammar(templates: Iterable[str], typed_entities: Iterable[tuple[str, str]] = ()) -> TemplateGrammar:
    """The typed actions of one TextWorld game: its command templates ("take {o} from {c}") with
    every typed slot a slot, and an action on a `{d}` entity (a door, a passageway) done on a way."""
    doors = {name.lower() for name, kind in typed_entities if kind == DOOR_TYPE}
    forms = {_TYPED_SLOT.sub("{}", t): _TYPED_SLOT.sub("{}", t) for t in templates}
    return TemplateGrammar(forms, way=lambda _template, args: any(a.lower() in doors for a in args))


def twx_grammar() -> TemplateGrammar:
    """TextWorld-Express's typed actions: its forms, a door's way named by its direction."""
    return TemplateGrammar({form: form for form in TWX_FORMS}, way=lambda template, _args: "door to" in template)
