"""ScienceWorld's actions, typed: its templates, the other ways its parser takes them, and how it
names things.

The simulator's templates ("move OBJ to OBJ", "go OBJ", ...) are the templates here, with `{}` for
OBJ; its parser also takes "go to X", "pour X into Y", "examine X", "drop X", which are the same
actions. How ScienceWorld names a thing changes with where it is and what it holds, so a thing's
canonical name leaves that out: a description in parentheses ("seed jar (containing a apple
seed)"), a reading ("thermometer, currently reading a temperature of 10 degrees celsius"), and
where it is when that is the inventory or a room ("orange in inventory", "cup containing red paint
in art studio"); a door is named by where it leads ("bedroom door" is the "door to bedroom"). What
a name says of the thing itself stays ("substance in metal pot", "anode in
battery", "cup containing red paint": the cup of red paint is not the cup of blue). A door is a
way between rooms: opening or closing one is done on the way (`Act.on_way`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rbdspy.envs.actions import Act, TemplateGrammar

# Each way the parser takes an action -> the simulator's template it is.
FORMS = {
    "open {}": "open {}",
    "close {}": "close {}",
    "go to {}": "go {}",
    "go {}": "go {}",
    "look around": "look around",
    "look at {}": "look at {}",
    "examine {}": "look at {}",
    "look in {}": "look in {}",
    "activate {}": "activate {}",
    "deactivate {}": "deactivate {}",
    "eat {}": "eat {}",
    "move {} to {}": "move {} to {}",
    "pour {} into {}": "pour {} in {}",
    "pour {} in {}": "pour {} in {}",
    "focus on {}": "focus on {}",
    "reset task": "reset task",
    "use {} on {}": "use {} on {}",
    "read {}": "read {}",
    "flush {}": "flush {}",
    "connect {} to {}": "connect {} to {}",
    "disconnect {}": "disconnect {}",
    "wait1": "wait1",
    "wait": "wait",
    "inventory": "inventory",
    "pick up {}": "pick up {}",
    "put down {}": "put down {}",
    "drop {}": "put down {}",
    "mix {}": "mix {}",
    "task": "task",
    "dunk {} into {}": "dunk {} in {}",
    "dunk {} in {}": "dunk {} in {}",
}
# How the adapter writes a template back (as its compact admissible list does).
WRITES = {"go {}": "go to {}", "pour {} in {}": "pour {} into {}", "dunk {} in {}": "dunk {} into {}"}
# The template whose thing is the task's answer: a wrong one ends the episode.
ANSWER_TEMPLATE = "focus on {}"
_WAY_TEMPLATES = frozenset({"open {}", "close {}"})
_DESCRIPTION = re.compile(r"\s*\(.*$")
_READING = re.compile(r",\s*currently\s.*$")
_ARTICLE = re.compile(r"^(?:a|an|the|some)\s+", re.IGNORECASE)
_ROOM_DOOR = re.compile(r"^(.+) door$", re.IGNORECASE)


def thing_name(text: str, rooms: Iterable[str] = ()) -> str:
    """The canonical name of a thing as ScienceWorld writes it (see the module docstring)."""
    name = _READING.sub("", _DESCRIPTION.sub("", " ".join(str(text or "").split())))
    name = _ARTICLE.sub("", name).strip()
    door = _ROOM_DOOR.match(name)
    if door and door.group(1).lower() in {r.lower() for r in rooms}:  # one door, named both ways
        name = f"door to {door.group(1)}"
    lowered = name.lower()
    for where in ("inventory", *rooms):
        suffix = f" in {where.lower()}"
        if lowered.endswith(suffix) and len(lowered) > len(suffix):
            return name[: -len(suffix)].strip()
    return name


def is_door(name: str) -> bool:
    """Whether ScienceWorld's name is a door's ("door to kitchen", "art studio door", "door")."""
    return "door" in name.lower().split()


# The rooms of ScienceWorld's house (every task's): the adapter adds any the simulator names besides.
HOUSE_ROOMS = (
    "art studio",
    "bathroom",
    "bedroom",
    "foundry",
    "greenhouse",
    "hallway",
    "kitchen",
    "living room",
    "outside",
    "workshop",
)


class ScienceWorldGrammar:
    """Parses ScienceWorld's actions into `Act`s and renders them back; `rooms` are the house's
    rooms (a thing named as being in one is named without it)."""

    def __init__(self, rooms: Iterable[str] = HOUSE_ROOMS):
        self.rooms = tuple(rooms)
        self._grammar = TemplateGrammar(
            FORMS,
            WRITES,
            thing=lambda text: thing_name(text, self.rooms),
            way=lambda template, args: template in _WAY_TEMPLATES and any(is_door(a) for a in args),
        )

    def parse(self, text: str) -> Act:
        """The act `text` writes; text no form fits (the number that answers an ambiguity) is an
        act of its own, its template the text itself."""
        act = self._grammar.parse(text)
        return act if act is not None else Act(template=" ".join(str(text).split()).lower() or "?")

    def render(self, act: Act) -> str:
        return self._grammar.render(act)

    def answer(self, act: Act) -> str | None:
        """The thing `act` gives as the task's answer ("focus on X": X), else None."""
        return act.args[0] if act.template == ANSWER_TEMPLATE and act.args else None


# "a flower pot 8 (containing a apple tree in the adult stage, soil)"; "On the counter is: a bowl (...)".
_CONTAINING = re.compile(r"^\s*(?:an?|the|some)\s+(.+?)\s+\(containing (.+)\)\s*$")
_ON_OR_IN = re.compile(r"^\s*(?:an?|the|some)\s+(.+?)[.,].*?\b(?:On|In) the [^:]+ is: (.+?)\.?\s*$")
_STAGE = re.compile(r"^(.+?) in the (\w+) stage(?:\b.*)?$")
_PART = re.compile(r",\s*(?![^()]*\))")


def _look_name(text: str) -> str:
    """A thing as the look writes it, named as the parser does: "a apple tree in the adult stage
    with a short height" is the "adult apple tree"."""
    name = _ARTICLE.sub("", _DESCRIPTION.sub("", text.strip())).strip()
    stage = _STAGE.match(name)
    return f"{stage.group(2)} {stage.group(1)}" if stage else name


def holders(look: str) -> dict[str, str]:
    """What holds each thing the look lists inside or on another ("adult apple tree" -> "flower
    pot 8", "bowl" -> "counter"): ScienceWorld says it in words, so its adapter reads them."""
    found: dict[str, str] = {}
    for line in look.splitlines():
        match = _CONTAINING.match(line) or _ON_OR_IN.match(line)
        if match is None:
            continue
        holder, held = _look_name(match.group(1)), match.group(2)
        for part in _PART.split(held):
            name = _look_name(part)
            if name and name.lower() != "nothing" and not name.startswith("substance called"):
                found[name] = holder
    return found
