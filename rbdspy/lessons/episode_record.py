"""The action record: what an episode did, as a memory item whose data is the episode itself.

A small agent acts on a concrete next step, not on prose, and in a world that persists what one
episode did is a map for the next: where the mug was, which way the kitchen is, which door must be
opened first. So besides its lessons, an episode can be stored as its typed experience
(`rbdspy.types.Experience`: each action with the places before and after it and what was in view),
written without an LM call; the item's content is that data rendered for a reader, and an agent
reads the data back as a map (`rbdspy.maps`), never the text.

A failed episode is a map too: where the agent went and what it saw are facts of the world whatever
the task's outcome. So a bank may record every episode (`EVERY`), which makes its map independent
of the judge's labels, in a world that persists (the environment's `world_of`; elsewhere only
successes are recorded).
"""

from __future__ import annotations

from typing import Any

from rbdspy.core.text import clip
from rbdspy.maps.experience import experience_of, render_experience
from rbdspy.types import CONTENT_MAX, DESCRIPTION_MAX, TITLE_MAX, Lesson, Trajectory

# How many items a bank that writes action records retrieves: a success's lessons and its record
# are stored under the same task, so they tie in retrieval; 3 serves the record beside them.
ROUTE_MEMORIES = 3

# How many a bank that records every episode's places retrieves: a map is about the world, not
# the task, so the way to a thing is often in the record of a dissimilar quest, and more records
# make a fuller map; the routes agent reads them as a map and does not show the block in its
# prompt, so they cost it no tokens. Measured:
# docs/results/memory.md#a-world-that-persists-the-house-stream
PLACE_MEMORIES = 10

# What Extractor(action_record=...) records: nothing, successes only, every judged episode, or
# (RECORD_BY_WORLD, spelled "auto", the default) what `rbdspy.lessons.auto.auto_for` says for the
# episode's world: every episode played in a world that persists, nothing elsewhere.
SUCCESSES, EVERY, RECORD_BY_WORLD = True, "every", "auto"
ACTION_RECORD_MODES = (False, SUCCESSES, EVERY, RECORD_BY_WORLD)


def check_mode(mode: Any) -> bool | str:
    """`mode` if it is one of ACTION_RECORD_MODES, else a ValueError naming the choices."""
    if not any(mode is m or (isinstance(m, str) and mode == m) for m in ACTION_RECORD_MODES):
        raise ValueError(
            f"action_record must be False, True (successes), {EVERY!r} (every episode) or {RECORD_BY_WORLD!r} (every "
            f"episode in a world that persists); got {mode!r}"
        )
    return mode


def episode_world(trajectory: Trajectory) -> str | None:
    """The persistent world an episode was played in ("textworld/1", as the environment's
    `world_of` names it in the trajectory's metadata); None when it names none."""
    return trajectory.metadata.get("world") or None


def record_episode(task: str, trajectory: Any, won: bool | None = True, places: bool = False) -> Lesson | None:
    """The memory item of an episode's experience (`won`: the episode was judged a success; None:
    nobody judged it):
    its content the experience rendered, its `experience` the data. With `places`, only an episode
    played in a world that persists is recorded when lost (its way leads nowhere elsewhere). None
    when the episode took no accepted action and named no place."""
    trajectory = Trajectory.coerce(trajectory, task=task)
    world = episode_world(trajectory)
    if places and world is None and not won:
        return None  # a lost episode is a map only of a world that persists
    experience = experience_of(trajectory, won=won)
    if experience is None or not (experience.start or any(step.accepted for step in experience.steps)):
        return None
    content = render_experience(experience, CONTENT_MAX - len(_world_note(world)))
    if won:
        title = f"Actions that did it: {task}"
        description = f"The actions a past episode in this environment won with: {task}"
    elif won is None:
        title = f"Actions taken: {task}"
        description = f"Where a past episode in this environment went and what it saw: {task}"
    else:
        title = f"Actions taken, not won: {task}"
        description = f"Where a past episode in this environment went and what it took, without winning: {task}"
    return Lesson(
        title=clip(title, TITLE_MAX),
        description=clip(description, DESCRIPTION_MAX),
        content=clip(_world_note(world) + content, CONTENT_MAX),
        experience=experience,
    )


def _world_note(world: str | None) -> str:
    return f"[in {world}] " if world else ""
