"""What "auto" means for one task, decided in one place: `auto_for(world)`.

Three settings of a bank's parts may be "auto": the retriever's `k` and `min_similarity`, and the
extractor's `action_record`. Each is decided per task by the same question: is the task played in
a world that persists (a house whose rooms and things stay put between tasks)? The retriever asks
the agent (its `world(...)` method, EnvAgent's), the extractor asks the trajectory (the world its
metadata names, `episode_record.episode_world`); both then read the answer here.

- In no such world: one item (the paper's best), the floor measured for the store's embedder, no
  action record (where the tasks share no world, where one episode went is no map for the next:
  a record would only cost tokens).
- In a world that persists: a map is about the world, not the task, so the way to a thing is
  often in the record of a dissimilar task: `WORLD_K` items, no similarity floor, and every
  episode recorded as where it went and what it saw (a failed episode's places are facts of the
  world too). The `world_bank` preset (`rbdspy.loop.presets`) is this configuration for every
  task.

It lives with the lessons stage, beside the action record whose constants it reads
(`rbdspy.lessons.episode_record`), so that the extractor (here) and the retriever (rbdspy/loop/,
above) both read it and neither imports upwards.

Measured: docs/results/memory.md#a-world-that-persists-the-house-stream
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rbdspy.lessons.episode_record import EVERY, PLACE_MEMORIES

AUTO = "auto"
DEFAULT_K = 1  # the paper's ablation: one retrieved experience worked best, more hurt
WORLD_K = PLACE_MEMORIES
# The floor measured for the store's embedder (`retriever.MEASURED_FLOORS`; none for an embedder
# rbdspy has not measured): cosine scales differ between embedders, so one number cannot fit all.
MEASURED = "measured"


@dataclass(frozen=True)
class AutoSettings:
    """What "auto" resolves to for one task."""

    k: int  # items served
    min_similarity: float | None | Literal["measured"]  # the similarity floor; MEASURED: the embedder's
    action_record: bool | str  # what the extractor records besides lessons (`episode_record.py`)


IN_NO_WORLD = AutoSettings(k=DEFAULT_K, min_similarity=MEASURED, action_record=False)
IN_A_WORLD = AutoSettings(k=WORLD_K, min_similarity=None, action_record=EVERY)


def auto_for(world: str | None) -> AutoSettings:
    """The settings "auto" means for a task played in `world` (the world that persists it is
    played in, as the agent or the trajectory names it; None: in no such world)."""
    return IN_A_WORLD if world is not None else IN_NO_WORLD
