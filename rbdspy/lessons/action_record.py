"""The action record: what a successful episode did, as a memory item of actions.

A small agent acts on a concrete next action, not on prose (calibration on the house stream), and
on a world that persists the actions that won one task are a map for the next: where the mug was,
which way the kitchen is. So besides its lessons, a success can be stored as the actions that did
it: those the environment accepted, with moves that the next move undid and immediate repeats
taken out ("> go north | > take mug | > go south | > put mug on stand"). Written without an LM
call; the environment agent reads it back as routes (`envs/memory_routes.py`).
"""

from __future__ import annotations

from typing import Any

from rbdspy.action_text import format_actions, simplify
from rbdspy.text import clip
from rbdspy.types import CONTENT_MAX, DESCRIPTION_MAX, TITLE_MAX, Lesson, Trajectory

# How many items a bank that writes action records retrieves: a success's lessons and its record
# are stored under the same task, so they tie in retrieval; 3 serves the record beside them.
ROUTE_MEMORIES = 3

# The roles EnvAgent writes (envs/base.py; importing it from here would load the environments).
AGENT_ROLE, ENV_ROLE = "agent", "env"


def accepted_actions(trajectory: Trajectory) -> list[str]:
    """The agent's actions the environment accepted (its reply not marked `valid: False`), moves
    undone by the next move and immediate repeats removed."""
    actions: list[str] = []
    pending: str | None = None
    for step in trajectory.steps:
        if step.role == AGENT_ROLE:
            pending = step.content.strip()
        elif step.role == ENV_ROLE and pending is not None:
            if (step.metadata or {}).get("valid", True) is not False and (not actions or actions[-1] != pending):
                actions.append(pending)
            pending = None
    return simplify(actions)


def action_record(task: str, trajectory: Any) -> Lesson | None:
    """The memory item of a successful episode's accepted actions; None when it took none. The
    start is kept when the whole does not fit: a route is read from where every episode starts."""
    trajectory = Trajectory.coerce(trajectory, task=task)
    actions = accepted_actions(trajectory)
    if not actions:
        return None
    content = format_actions(actions)
    while len(content) > CONTENT_MAX and len(actions) > 1:
        actions = actions[:-1]
        content = format_actions(actions)
    return Lesson(
        title=clip(f"Actions that did it: {task}", TITLE_MAX),
        description=clip(f"The actions a past episode in this environment won with: {task}", DESCRIPTION_MAX),
        content=clip(content, CONTENT_MAX),
    )
