"""The task's targets chosen by the LM (`ChooseTaskTargets`), beside the data rule of `targets.py`.

The data rule finds a kind of thing ("find an animal") only where a task like this one was won
before; an LM knows a dove is an animal. `TargetChooser` shows the LM the things the map has seen
(each with where) and keeps only the names it copies from that list: a name the map does not know,
an empty answer or a failed call leaves the data rule's targets.
"""

from __future__ import annotations

import dspy

from rbdspy.core.lm_errors import raise_if_setup_error
from rbdspy.maps.targets import Target, named_targets, task_targets
from rbdspy.maps.world_map import WorldMap
from rbdspy.signatures.maps import ChooseTaskTargets

# The most things listed to the LM, those seen in most episodes first: a prompt stays short in a
# world with many things in it.
MAX_THINGS = 80
# The answer's token budget: a few names. Unbounded, a small LM went on listing names until the
# engine's limit (minutes a call on a CPU), and the cut-off list did not parse.
MAX_ANSWER_TOKENS = 64


def things_seen(world: WorldMap, limit: int = MAX_THINGS) -> list[str]:
    """The map's things with where each was seen, those seen most first, as the LM reads them."""
    ranked = sorted(world.things, key=lambda t: (-sum(world.sightings.get(t, {}).values()), t))
    lines = []
    for thing in ranked[:limit]:
        places = world.where(thing)
        lines.append(f"{thing} (seen in: {', '.join(places)})" if places else f"{thing} (carried)")
    return lines


class TargetChooser(dspy.Module):
    """`chooser(task=..., world=...)` -> `Prediction(targets=[Target, ...], chosen=[names])`."""

    def __init__(self, max_things: int = MAX_THINGS):
        super().__init__()
        self.max_things = max_things
        self.choose = dspy.Predict(ChooseTaskTargets)

    def forward(self, task: str, world: WorldMap) -> dspy.Prediction:
        fallback = task_targets(task, world)
        lines = things_seen(world, self.max_things)
        if not lines:
            return dspy.Prediction(targets=fallback, chosen=[])
        try:
            answer = self.choose(task=task, things_seen="\n".join(lines), config={"max_tokens": MAX_ANSWER_TOKENS})
        except Exception as exc:  # a misbehaving LM leaves the data rule's targets
            raise_if_setup_error(exc)
            return dspy.Prediction(targets=fallback, chosen=[])
        known = {thing.lower(): thing for thing in world.things}
        chosen = list(
            dict.fromkeys(
                known[n.strip().lower()]
                for n in answer.targets or []
                if isinstance(n, str) and n.strip().lower() in known
            )
        )
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
