"""Aids to the agent's own loop, the same for every arm (memory or none): where the agent is and
what it has done, and no action repeated from the same state.

Why: on a persistent TextWorld world the bare 1.5B agent spent most of its steps moving back and
forth between two rooms or taking and dropping the same object, so it rarely reached a state
where any memory could matter. Each aid is an option of `EnvAgent` (`status_line`, `repeat_guard`,
`suggest`, `focus`, `show_memory`, `confirm`), measured on the house stream with and without it
(the named variants of `rbdspy.bench.agent_variants`, `rbdspy bench --agent`).

- Status line: "[You are in the canteen; you carry: a berry; rooms visited: studio, canteen]"
  above the observation, from the environment's `status()` (TextWorld houses have one; an
  environment without it gets no line).
- Suggested action (`suggest`): where the memory block holds action sequences (past episodes, the
  gold-exemplar control), the next step of the route they remember to what the task names is shown
  first in the admissible list and named above the observation (`rbdspy.maps.MapSuggester`).
- Task focus (`focus`): admissible actions that name something the task names are listed first
  ("eat grape" above "take book" when the task is "Eat the grape."), in their own order otherwise;
  where the environment's tasks are imperatives, an admissible action that does what the task says
  (its verb, every thing it names: "eat grape") is listed first of all and named above the
  observation. Which verbs name no thing and whether a task is an imperative are the environment's
  to say (its `language`, an `ActionLanguage`); an environment that says nothing gets English
  function words only and no action named as the task's. Calibration: holding the grape, with
  "eat grape" first in the list, the agent played "take grape" six times.
- Memory out of sight (`show_memory=False`, the `routes` variant): the memory block feeds the
  suggestions but is not in the prompt. Calibration: served three walkthroughs about other
  objects, the agent played their actions ("take berry" six times on "Eat the grape.").
- Repeat guard: the state an action is taken from is (place, what the agent carries) where the
  environment says so (its `status()`, else the `whereabouts` of its last observation), else the
  observation text. An action chosen again from a state it was already played from changed nothing
  the first time it mattered, so the agent is asked once more, with that action struck from the
  list and a note saying why, to choose among the listed actions left (a `Literal` output: an LM
  that decodes under a JSON schema answers one of them). Asked freely, the 1.5B model wrote the
  struck action again and again. Neither an action already tried from the same state nor one the
  environment says gives the task's answer (`answer_in`: ScienceWorld's "focus on X") is among
  those choices: a forced choice is not a decision to answer, and under the constraint a small LM
  takes the first choice listed, so each new ask moves down the list. An LM that answers outside
  the choices insists: the action is played, unless (with `focus`) an admissible action does what
  the task says: that one is played instead.
- Follow the map (`follow`, with `suggest`): where the map's next step is on the way to another
  place (a move, or the door opened first where the move was learned), the agent takes it without
  an LM call; the LM chooses every other action, and every action done with a thing (taking one,
  giving the task's answer) is the LM's, the map's offer only listed first. The map holds only
  moves an environment accepted and that changed the place it named, so following it costs steps at
  worst, never an answer. Why: on ScienceWorld's house, with "go to hallway" offered first and
  named above the observation, the 1.5B agent holding an orange played "move orange to book shelf"
  (the task says "move it to the blue box"), and asked whether to take the offered step it said
  P(yes) = 0.24 to every offer, right or wrong.
- Handle as before (`handle`, with `follow`): the map's step that does with a thing in view what a
  past task of this kind did with one ("focus on blue jay", "pick up blue jay") is taken too, an
  answer only once the answer check keeps it. Why: on ScienceWorld build tasks, offered such a
  step first and named above the observation, the 1.5B agent played it in 1 of 4 prompts (the
  others: "move orange to sink" with the orange it starts with, "look around"), with either
  adapter and with the offer reworded.
- Listed actions only (`listed_only`): where the environment lists every action it understands
  now (a list with no templates), an action the LM writes that is not listed (after the respelling
  match of `action_choice`) is asked again as a choice among the listed actions, as after a
  repeat. Why: on a TextWorld house with a varying start room the bare 1.5B agent's actions were
  refused 30 times in 223 (13%), "put pear on chair" where no chair was.
- Explore (`explore`): after `EXPLORE_AFTER` actions in one place, where the map offers no step,
  the agent takes the environment's way out to a place it has not been this episode
  (`Environment.way_out`: in ScienceWorld through the first door to a room not yet visited,
  opening it first), without an LM call; with every neighbouring place visited, the LM goes on
  choosing. An environment that cannot say gets no such step. Why: in ScienceWorld's house the
  bare 1.5B agent spent all 20 steps of every build episode in the room it started in, picking up,
  moving and looking at what was there (a book taken counts as something new, so the count is of
  actions in one place, whatever they put in hand), and never opened a door.
- Answer check (`confirm`): before an action the environment says gives the task's answer
  (`answer_in`), the agent is asked whether the thing it names is what the task asks for
  (rbdspy/agent/answer_check.py). On a no the action is struck for the rest of the
  episode and the agent chooses among the listed actions left, as after a repeat. Why: a wrong
  answer ends the episode; on ScienceWorld's house the 1.5B agent committed within its first
  three steps to whatever was in view (the sink, a box, the orange it held) in most episodes. An
  LM that cannot answer the check leaves the action as chosen.
- Scan for the answer (`scan`, with `confirm`): with memory of past episodes, for a kind of task
  none of them gave a confirmed answer to, in each place until the episode has given an answer
  and where the map plays no answer of its own, every answer the environment lists there but the
  ones past episodes lost on (`MapSuggester.refuted`) is asked about as the check asks ("Is blue
  jay a living thing?"), and the one with the highest P(yes) is played when it reaches
  `SCAN_THRESHOLD` (rbdspy/agent/answer_check.py). Why: on ScienceWorld's house the 1.5B agent,
  standing outside among animals, looked around and moved the orange it held; asked about each
  thing in view, it put a right answer first in 11 of 18 train tasks' answer places. Not without
  memory: nothing there refutes a wrong pick, and a threshold chosen on train tasks played the
  kitchen's potato as "a plant" on dev ones (a wrong answer ends the task).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rbdspy.envs.base import ActionLanguage


def status_of(env: Any, whereabouts: Any = None) -> dict[str, str] | None:
    """The environment's `status()` (location, inventory); where it has none, the same read from
    the `whereabouts` it gave with its last observation (every environment that names places);
    None where neither says."""
    status = getattr(env, "status", None)
    value = None
    if callable(status):
        try:
            value = status()
        except Exception:  # a status is an aid: an environment that cannot say gives no line
            value = None
    if isinstance(value, dict):
        return value
    if whereabouts is None or not whereabouts.place:
        return None
    return {"location": whereabouts.place, "inventory": ", ".join(whereabouts.carrying) or "nothing"}


def status_line(status: dict[str, str] | None, visited: list[str]) -> str:
    if not status:
        return ""
    parts = []
    if status.get("location"):
        parts.append(f"You are in the {status['location']}")
    if status.get("inventory"):
        parts.append(f"you carry: {status['inventory']}")
    if visited:
        parts.append(f"rooms visited: {', '.join(visited)}")
    return f"[{'; '.join(parts)}]" if parts else ""


def state_key(status: dict[str, str] | None, observation: str) -> tuple[str, ...]:
    """What "the same state" means for the repeat guard."""
    if status and status.get("location"):
        return ("status", status["location"], status.get("inventory", ""))
    return ("observation", observation.strip())


_WORDS = re.compile(r"[a-z0-9]+")
_LEADING_VERB = re.compile(r"^\s*[a-z]+\s+(?:the\s+|a\s+|an\s+)?")
_RELATION = re.compile(r"\s+(?:on|in|into|onto|from|with|to)\s+(?:the\s+|a\s+|an\s+)?")
_FILLER = frozenset({"the", "a", "an", "of"})


def task_things(task: str) -> list[frozenset[str]]:
    """The things an imperative task names, in order, each as its words: "Put the loaf of bread
    on the stand." -> [{loaf, bread}, {stand}]. Only the task's first line is read, as plain
    English; used only where the environment says its tasks are imperatives
    (`ActionLanguage.imperative_tasks`)."""
    first = (task or "").strip().splitlines()[0].lower() if (task or "").strip() else ""
    body = _LEADING_VERB.sub("", first.rstrip(". !?"), count=1)
    things = []
    for part in _RELATION.split(body):
        words = frozenset(_WORDS.findall(part)) - _FILLER
        if words:
            things.append(words)
    return things


def names(action: str, thing: frozenset[str]) -> bool:
    return bool(thing) and thing <= set(_WORDS.findall(action.lower()))


# English words that name no thing: a shared "the" says nothing about the task.
_STOP = frozenset({"the", "a", "an", "on", "in", "into", "from", "to", "of", "with", "and"})


def focus_order(
    actions: list[str],
    task: str,
    answers: Callable[[str], Any] | None = None,
    plain_verbs: frozenset[str] = frozenset(),
) -> list[str]:
    """`actions` with those naming more of the task's things first, then, among those, the ones
    whose verb the task uses too (stable otherwise). Neither English function words nor the
    environment's `plain_verbs` (`ActionLanguage.plain_verbs`: "take" in a game whose takings all
    begin so) are read as something the task names. A verb alone promotes nothing: a task that says
    "focus on the thing, then move it" would otherwise list every "focus on X" and "move X to Y"
    first, whatever X is. Nor are actions that give the task's answer promoted (`answers`, the
    environment's `answer_in`): a task names where to bring the thing as often as the thing
    ("move it to the blue box" put "focus on blue box" first, and the 1.5B agent answered with
    the box), and which answer to give is the agent's and its answer check's to decide."""
    wanted = set(_WORDS.findall(task.lower())) - _STOP - plain_verbs

    def rank(action: str) -> tuple[int, int]:
        if answers is not None and answers(action):
            return (0, 0)
        verb, *rest = _WORDS.findall(action.lower()) or [""]
        things = len(wanted & set(rest))
        return (-things, -int(things > 0 and verb in wanted))

    return sorted(actions, key=rank)


def task_action(actions: list[str], task: str, language: ActionLanguage) -> str | None:
    """The action among `actions` that does what an imperative `task` says: its verb (or one of
    its `language.verb_forms`: "Put the mug in the fridge." is done by "insert mug into fridge")
    and every thing the task names; None when none does, the task names nothing, or the
    environment's tasks are not imperatives (`language.imperative_tasks`)."""
    if not language.imperative_tasks:
        return None
    first = (task or "").strip().splitlines()[0].lower() if (task or "").strip() else ""
    verb = first.split()[0] if first.split() else ""
    things = task_things(task)
    if not things:
        return None
    forms = language.verb_forms.get(verb, (verb,))
    for action in actions:
        words = action.lower().split()
        if words and words[0] in forms and all(names(action, thing) for thing in things):
            return action
    return None


def declined_note(action: str) -> str:
    return (
        f"(You were about to answer with '{action}', but that is not what the task asks for. "
        "Choose a different action: look for the right thing first.)"
    )


def unlisted_note(action: str) -> str:
    return f"(The environment does not understand '{action}' here. Choose one of the listed actions.)"


def repeat_note(action: str) -> str:
    return (
        f"(You already did '{action}' from this same place carrying the same things, and it did not get "
        "the task done. Choose a different action.)"
    )


@dataclass(frozen=True)
class Aids:
    """The aids to the agent's own loop, each on or off (see the module's docstring). The
    defaults are none, with the memory block in the prompt (`NO_AIDS`)."""

    status_line: bool = False
    repeat_guard: bool = False
    suggest: bool = False
    focus: bool = False
    show_memory: bool = True
    confirm: bool = False
    follow: bool = False
    explore: bool = False
    handle: bool = False
    listed_only: bool = False
    scan: bool = False

    def replace(self, **changes: bool) -> Aids:
        """These aids with some set otherwise; an unknown aid is a ValueError naming the aids."""
        return dataclasses.replace(self, **_checked(changes))


# How many actions the agent may play in one place before the `explore` aid takes a way out: a
# few to find and handle what is there, few enough that a 20-step episode still sees three or
# four rooms (a first choice, measured on ScienceWorld build tasks).
EXPLORE_AFTER = 4

NO_AIDS = Aids()
# In a world that persists every aid but the memory block in view: a bank's map reaches the agent
# only as the steps it offers, so a small model cannot copy actions from a sequence about something
# else, and the loop aids keep it out of the loops that kept it from the states memory could help in.
# The map's part is played without asking (its ways, what a past task of the kind did with a thing
# in view, answers only once checked): a 1.5B model offered a step chose it about as often as any
# other, right or wrong; the LM decides the rest, among the actions the environment lists. For a
# kind of task memory holds no confirmed answer to, the answer check scans what is in view.
WORLD_AIDS = Aids(
    status_line=True,
    repeat_guard=True,
    suggest=True,
    focus=True,
    show_memory=False,
    confirm=True,
    follow=True,
    explore=True,
    handle=True,
    listed_only=True,
    scan=True,
)


@dataclass(frozen=True)
class AidsByWorld:
    """Aids chosen per task: `persistent` on a task in a world that persists (the environment's
    `world_of` names one), `elsewhere` on the others."""

    persistent: Aids = WORLD_AIDS
    elsewhere: Aids = NO_AIDS

    def replace(self, **changes: bool) -> AidsByWorld:
        """The same change made to the aids of both kinds of task."""
        return AidsByWorld(self.persistent.replace(**changes), self.elsewhere.replace(**changes))

    def for_task(self, persistent: bool) -> Aids:
        return self.persistent if persistent else self.elsewhere


# What EnvAgent plays with where it is not told: every aid in a world that persists, none elsewhere
# (the environments whose tasks share no world, where the aids were not measured).
DEFAULT_AIDS = AidsByWorld()
AID_NAMES = tuple(field.name for field in dataclasses.fields(Aids))


def _checked(changes: dict[str, bool]) -> dict[str, bool]:
    unknown = set(changes) - set(AID_NAMES)
    if unknown:
        raise ValueError(f"unknown aid(s) {sorted(unknown)}; aids: {', '.join(AID_NAMES)}")
    return {name: bool(value) for name, value in changes.items()}


# The world's aids with every step the map offers only offered: the LM chooses each action.
OFFERED_AIDS = WORLD_AIDS.replace(follow=False, explore=False, handle=False, listed_only=False, scan=False)


def aids_for(aids: Aids | AidsByWorld, persistent: bool) -> Aids:
    """The aids an episode plays with: `aids` as given, or, chosen per task, those of its kind."""
    return aids.for_task(persistent) if isinstance(aids, AidsByWorld) else aids
