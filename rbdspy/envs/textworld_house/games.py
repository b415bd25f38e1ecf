"""A quest's TextWorld game, and playing a compiled one.

Names: every game of a world is built with the grammar from the same seed (the world's), so an
object has one name in all of them; `only_last_action` keeps TextWorld's objective from narrating
the walkthrough, and the objective shown is written here from the goal alone ("Put the burger on
the plate."), never saying where things are.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

from numpy.random import RandomState

from rbdspy.envs.textworld_house.world import _textworld

# The objective shown for each goal rule's verb, from the goal alone.
OBJECTIVES = {
    "take": "Take the {obj}.",
    "put": "Put the {obj} on the {target}.",
    "insert": "Put the {obj} in the {target}.",
    "eat": "Eat the {obj}.",
    "open": "Open the {target}.",
    "unlock": "Unlock the {target}.",
}


@dataclass(frozen=True)
class Goal:
    """What a quest asks: the goal rule's name ("put", "take/c", ...) and its entities by role."""

    rule: str
    obj: str = ""
    target: str = ""

    def objective(self) -> str:
        verb = self.rule.split("/")[0]
        if verb not in OBJECTIVES:
            raise ValueError(f"no objective for goal rule {self.rule!r}")
        return OBJECTIVES[verb].format(obj=self.obj, target=self.target)

    @property
    def entities(self) -> tuple[str, ...]:
        return tuple(e for e in (self.obj, self.target) if e)


def make_grammar(seed: int):
    """The grammar every game of world `seed` is built with (same seed: same names)."""
    _textworld()
    from textworld.generator import make_grammar as tw_make_grammar  # optional: textworld (the envs extra)

    return tw_make_grammar({"only_last_action": True}, rng=RandomState(seed))


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


def build_game(world, seed: int, actions):
    """The TextWorld Game of a quest's actions in world `seed` (its own objective set from the goal)."""
    from textworld.generator import Event, Game, Quest  # optional: textworld (the envs extra)

    game = Game(world, make_grammar(seed), [Quest(win_events=[Event(actions=actions)])])
    names = {key: info.name for key, info in game.infos.items() if info.name}
    goal = goal_of(actions[-1], names)
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
