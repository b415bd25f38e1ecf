"""What an environment can do beyond the protocol every adapter speaks, one `Protocol` each.

Why protocols, not methods every adapter inherits: a hook with a default on the base class is
always there, so a caller cannot tell "this environment has no persistent world" from "this
adapter forgot to say", and a hook probed with `getattr` switches on whatever follows it (the
agent's world aids follow `world_of`) for any environment that happens to define it. Here an
adapter implements only the hooks it supports, its registry entry (`rbdspy.envs.registry`) declares
the same capabilities, and the conformance kit (`rbdspy.envs.conformance`) checks that the two
agree. Callers ask `isinstance(env, PersistentWorlds)`, or use the helpers below, which answer
None where the environment has no such capability.

Every protocol here has methods only, so `issubclass(AdapterClass, NamesPlaces)` answers for a
class without starting its simulator.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from rbdspy.envs.actions import TypedActions
from rbdspy.envs.task_ref import TaskRef
from rbdspy.envs.whereabouts import Whereabouts
from rbdspy.types import Experience


@runtime_checkable
class NamesPlaces(Protocol):
    """The environment says where the agent is (the place, the things in view, what it carries):
    what a map is learned from. Where none does, no map is learned from its episodes."""

    def whereabouts(self) -> Whereabouts | None:
        """Where the agent is now, or None outside an episode or where this observation names no place."""
        ...


@runtime_checkable
class PersistentWorlds(Protocol):
    """The tasks are played in worlds that persist: the same places and fixed things in every task
    of a world, whatever place an episode starts in. Declare it only where that holds: the agent's
    world aids and a bank's per-world retrieval follow it."""

    def world_of(self, task: TaskRef | str) -> str:
        """The world `task` is played in ("textworld/1", "scienceworld/house")."""
        ...


@runtime_checkable
class KindsOfTask(Protocol):
    """The environment names kinds of task whose tasks are satisfied alike ("find-animal": any
    animal will do): a map looks for what satisfied a task of the same kind."""

    def kind_of(self, task: TaskRef | str) -> str:
        """The kind `task` is."""
        ...


@runtime_checkable
class Answers(Protocol):
    """Some actions give the task's answer, after which the episode is judged on it (ScienceWorld's
    "focus on X"): the agent's answer check asks about that thing before playing such an action."""

    def answer_in(self, action: str) -> str | None:
        """The thing `action` gives as the answer; None for an action that answers nothing."""
        ...


@runtime_checkable
class WaysOut(Protocol):
    """The environment can name a way to a place not visited yet: the agent's `explore` aid plays it."""

    def way_out(self, visited: Sequence[str]) -> str | None:
        """An action towards a place next to the agent's not in `visited` (the places visited this
        episode, the one left longest ago first); where every way leads to a visited place,
        towards the one left longest ago; None where there is no way or it cannot say."""
        ...


@runtime_checkable
class WaysBack(Protocol):
    """A move can be undone by an action the environment names: a map knows the way back before
    any episode took it."""

    def way_back(self, action: str, came_from: str) -> str | None:
        """The action that undoes `action`, a move from `came_from`; None where it cannot say."""
        ...


@runtime_checkable
class StatusLine(Protocol):
    """The environment states where the player is and what it carries in words of its own (the
    agent's status line and repeat guard); elsewhere those are read from `whereabouts`."""

    def status(self) -> Whereabouts | None:
        """The place and what is carried (`in_view` may stay empty), or None outside an episode."""
        ...


@runtime_checkable
class Understands(Protocol):
    """The environment tells a refusal of the words apart from an action it understood that
    changed nothing ("You already have that."), which a step's `valid` does not."""

    def understood(self, observation: str) -> bool:
        """Whether the action `observation` answers was understood."""
        ...


@runtime_checkable
class LessonTruth(Protocol):
    """The environment knows its worlds' facts and checks a lesson's claims against them."""

    def lesson_truth(self, text: str, task: TaskRef | str, experience: Experience | None = None) -> dict[str, int]:
        """How many claims `text` (and a record's typed `experience`) make about the task's world,
        and how many are true."""
        ...


@runtime_checkable
class OracleFacts(Protocol):
    """The environment writes its worlds' facts (map, where things are) as memory items: the
    ceiling for fact memory, served by the bench's `oracle-facts` and `placebo` controls."""

    def oracle_items(self, task: TaskRef | str) -> list[dict[str, str]]:
        """The facts of the task's world, as memory items, from where the task starts."""
        ...

    def world_items(self, seed: int) -> list[dict[str, str]]:
        """The facts of world `seed`, as memory items naming that world."""
        ...


@runtime_checkable
class Quests(Protocol):
    """Each task is a quest in a generated world: its goal's entities, its objective and the seed
    of its world (the bench's controls rank similar tasks by them and pick another world)."""

    def quest(self, task: TaskRef | str) -> Any:
        """The task's quest (`.world_seed`, `.objective`, `.goal.entities`)."""
        ...


@runtime_checkable
class HostsTasks(Protocol):
    """A world holds a limited number of tasks: a stream asking for more is refused before it
    starts, saying what the world holds and what to ask instead."""

    def hosted(self, task_ids: Sequence[str]) -> list[str]:
        """The tasks among `task_ids` the environment can serve."""
        ...

    def capacity_note(self, task_type: str) -> str:
        """What `task_type` serves, in words, for a refusal."""
        ...

    def capacity_hint(self, task_type: str) -> str:
        """What else a refused stream could play ("" where nothing else would do)."""
        ...


@dataclass(frozen=True)
class ActionExample:
    """A made-up episode in an environment's own words: the task, what was seen first, the actions
    listed then, and each action played with what the environment answered. Made up, so that it
    shows how actions are written without giving away any real task. Where the actions listed
    change as the episode goes (another room), `listed` gives those listed after each step; where
    a step needs saying why (the thing is not here: look elsewhere), `thoughts` gives each step's
    reason. Either is empty, or one per step."""

    task: str
    observation: str
    admissible: tuple[str, ...]
    steps: tuple[tuple[str, str], ...]
    listed: tuple[tuple[str, ...], ...] = ()
    thoughts: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("listed", "thoughts"):
            given = len(getattr(self, name))
            if given and given != len(self.steps):
                raise ValueError(f"ActionExample.{name} has {given} entries for {len(self.steps)} steps")


@runtime_checkable
class ShowsActions(Protocol):
    """The environment shows, on a made-up episode, how its actions are written: a user's agent that
    has never seen one is shown it as a demonstration (`UserReAct(starter=True)`)."""

    def action_example(self) -> ActionExample:
        """A made-up episode, played to its end in actions this environment reads."""
        ...


# Every capability, in the order the guide and the conformance report list them. `TypedActions`
# (an adapter that parses its actions into `Act`s and renders them back) is defined with the typed
# actions, in `rbdspy.envs.actions`.
CAPABILITIES: tuple[type, ...] = (
    TypedActions,
    NamesPlaces,
    PersistentWorlds,
    KindsOfTask,
    Answers,
    WaysOut,
    WaysBack,
    StatusLine,
    Understands,
    LessonTruth,
    OracleFacts,
    Quests,
    HostsTasks,
    ShowsActions,
)


def hooks(capability: type) -> tuple[str, ...]:
    """The methods an adapter implements to have `capability` ("world_of" for PersistentWorlds)."""
    return tuple(name for name, value in vars(capability).items() if not name.startswith("_") and callable(value))


def capabilities_of(env: Any) -> frozenset[type]:
    """The capabilities an adapter (an instance, or its class) implements."""
    if isinstance(env, type):
        return frozenset(c for c in CAPABILITIES if issubclass(env, c))
    return frozenset(c for c in CAPABILITIES if isinstance(env, c))


def whereabouts_of(env: Any) -> Whereabouts | None:
    """`env.whereabouts()` where the environment names places, else None."""
    return env.whereabouts() if isinstance(env, NamesPlaces) else None


def world_of(env: Any, task: TaskRef | str) -> str | None:
    """The world `task` is played in where the environment's worlds persist, else None."""
    return env.world_of(task) if isinstance(env, PersistentWorlds) else None


def kind_of(env: Any, task: TaskRef | str) -> str | None:
    """The kind `task` is where the environment names kinds of task, else None."""
    return env.kind_of(task) if isinstance(env, KindsOfTask) else None


def answer_in(env: Any, action: str) -> str | None:
    """The thing `action` gives as the task's answer where the environment has answers, else None."""
    return env.answer_in(action) if isinstance(env, Answers) else None


def way_out(env: Any, visited: Sequence[str]) -> str | None:
    """The environment's way out to a place not in `visited`, where it names ways out, else None."""
    return env.way_out(visited) if isinstance(env, WaysOut) else None


def way_back(env: Any, action: str, came_from: str) -> str | None:
    """The action that undoes the move `action` from `came_from`, where the environment names one, else None."""
    return env.way_back(action, came_from) if isinstance(env, WaysBack) else None
