"""The task's targets chosen by the LM (`ChooseTaskTargets`), beside the data rule of `targets.py`.

The data rule finds a kind of thing ("find an animal") only where a task like this one was won
before; an LM knows a dove is an animal. `TargetChooser` shows the LM the things the map has seen
(each with where) and asks for at most `MAX_CHOSEN` of those names: the answer's type lists them
(an object holding a list of `Literal` names, at most `MAX_CHOSEN` long), so an LM that decodes
under a JSON schema (the embedded engine, most hosted ones) can only copy listed names and stops
after the last; one that answers otherwise, an empty answer or a failed call leaves the data
rule's targets.
"""

from __future__ import annotations

import copy
from typing import Literal

import dspy
from pydantic import Field, create_model

from rbdspy.core.lm_errors import raise_if_setup_error
from rbdspy.maps.targets import Target, named_targets, task_targets
from rbdspy.maps.world_map import WorldMap
from rbdspy.signatures.maps import ChooseTaskTargets

# The most things listed to the LM, those seen in most episodes first: a prompt stays short in a
# world with many things in it.
MAX_THINGS = 80
# The most names an answer holds: the thing to find first, and where the task brings it. Asked for
# a list with no bound, the 1.5B model went on listing names until the token budget cut it off, and
# the cut-off answer did not parse.
MAX_CHOSEN = 3
# The answer's token budget: a few names, with room for the JSON around them.
MAX_ANSWER_TOKENS = 96


def ranked_things(world: WorldMap, limit: int = MAX_THINGS) -> list[str]:
    """The map's things, those seen in most episodes first (then by name)."""
    return sorted(world.things, key=lambda t: (-sum(world.sightings.get(t, {}).values()), t))[:limit]


def things_seen(world: WorldMap, limit: int = MAX_THINGS) -> list[str]:
    """The map's things with where each was seen, those seen most first, as the LM reads them."""
    lines = []
    for thing in ranked_things(world, limit):
        places = world.where(thing)
        lines.append(f"{thing} (seen in: {', '.join(places)})" if places else f"{thing} (carried)")
    return lines


def choosing_among(predictor: dspy.Predict, names: list[str]) -> dspy.Predict:
    """A copy of `predictor` whose `targets` is an object holding at most `MAX_CHOSEN` of `names`
    (`{"names": [...]}`): a JSON schema the engine decodes under. A bare list type loses its length
    bound on the way to the schema; an object's field keeps it."""
    chosen = create_model("ChosenNames", names=(list[Literal[tuple(names)]], Field(max_length=MAX_CHOSEN)))
    chooser = copy.deepcopy(predictor)
    chooser.signature = chooser.signature.with_updated_fields("targets", type_=chosen)
    return chooser


class TargetChooser(dspy.Module):
    """`chooser(task=..., world=...)` -> `Prediction(targets=[Target, ...], chosen=[names])`."""

    def __init__(self, max_things: int = MAX_THINGS):
        super().__init__()
        self.max_things = max_things
        self.choose = dspy.Predict(ChooseTaskTargets)

    def forward(self, task: str, world: WorldMap) -> dspy.Prediction:
        fallback = task_targets(task, world)
        names = ranked_things(world, self.max_things)
        if not names:
            return dspy.Prediction(targets=fallback, chosen=[])
        lines = "\n".join(things_seen(world, self.max_things))
        try:
            answer = choosing_among(self.choose, names)(
                task=task, things_seen=lines, config={"max_tokens": MAX_ANSWER_TOKENS}
            )
        except Exception as exc:  # a misbehaving LM leaves the data rule's targets
            raise_if_setup_error(exc)
            return dspy.Prediction(targets=fallback, chosen=[])
        chosen = list(dict.fromkeys(getattr(answer.targets, "names", None) or []))
        targets = [
            Target(name, tuple(world.where(name)), carry=world.taking(name) is not None)
            for name in chosen
            if world.where(name)
        ]
        if not targets:
            return dspy.Prediction(targets=fallback, chosen=chosen)
        # The places the task names still count, after the things chosen (where to bring them).
        places = [t for t in named_targets(task, world) if not t.thing]
        return dspy.Prediction(targets=targets + places, chosen=chosen)
