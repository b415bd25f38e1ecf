"""The action record: what an episode did, as a memory item of actions.

A small agent acts on a concrete next action, not on prose (calibration on the house stream), and
on a world that persists the actions that won one task are a map for the next: where the mug was,
which way the kitchen is. So besides its lessons, a success can be stored as the actions that did
it: those the environment accepted, with moves that the next move undid and immediate repeats
taken out ("> go north | > take mug | > go south | > put mug on stand"). Written without an LM
call; the environment agent reads it back as routes (`envs/memory_routes.py`).

A failed episode's actions are a map too: where the agent went and what it took are facts of the
world whatever the task's outcome, and the route reader only follows moves and the taking of a
thing, never what was done with it. So a bank may also record every episode (`EVERY`), which
makes its routes independent of the judge's labels, in a world that persists (the environment's
`world_of`; elsewhere only successes are recorded). Such a record also lists the places the
episode saw, each as the moves from the start and the things in view there ("Seen: start =
book, stand ; go north = fridge, mug"; from the `things` EnvAgent notes on each observation):
a thing the agent only walked past is a route for the next task that names it.
"""

from __future__ import annotations

from typing import Any

from rbdspy.action_text import Place, format_actions, format_places, move_of, scoped, simplify
from rbdspy.text import clip
from rbdspy.types import CONTENT_MAX, DESCRIPTION_MAX, TITLE_MAX, Lesson, Trajectory

# How many items a bank that writes action records retrieves: a success's lessons and its record
# are stored under the same task, so they tie in retrieval; 3 serves the record beside them.
ROUTE_MEMORIES = 3

# How many a bank that records every episode's places retrieves: a map is about the world, not
# the task, so the way to a thing is often in the record of a dissimilar quest. On world 1's build
# quests the bare agent's own records held a way with a move to the task's first thing for 7
# quests at k=3 and 10 at k=6 or more (to its second thing: 1, 4, 5 at k=10)
# (benchmarks/route_coverage.py); the routes agent does not show the block in its prompt.
PLACE_MEMORIES = 10

# What Extractor(action_record=...) records: nothing, successes only, every judged episode, or
# (AUTO, a bank's default) every episode played in a world that persists and nothing elsewhere:
# where the tasks share no world, a record was never measured to help.
SUCCESSES, EVERY, AUTO = True, "every", "auto"
ACTION_RECORD_MODES = (False, SUCCESSES, EVERY, AUTO)

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


def seen_places(trajectory: Trajectory) -> list[Place]:
    """Where the episode went, each place once: the moves from the start (undone moves taken out)
    and the things first seen there (at the arrival, or when something opened there showed
    them), in the order seen. A thing is listed once, where it was first seen: one carried on
    shows up in view again further on."""
    listed: set[str] = set()
    found: dict[tuple[str, ...], list[str]] = {}
    path: list[str] = []
    pending: str | None = None
    for step in trajectory.steps:
        if step.role == AGENT_ROLE:
            pending = step.content.strip().lower()
            continue
        if step.role != ENV_ROLE:
            continue
        meta = step.metadata or {}
        if pending is not None:
            if meta.get("valid", True) is False:
                pending = None
                continue
            if move_of(pending):
                path = simplify(path + [pending])
            elif not pending.startswith("open "):
                pending = None
                continue  # taking, dropping, ...: what is in view now includes what is carried
        new = [t for t in meta.get("things", []) if t not in listed]
        listed.update(new)
        found.setdefault(tuple(path), []).extend(new)
        pending = None
    return [(list(path), things) for path, things in found.items() if things]


def check_mode(mode: Any) -> bool | str:
    """`mode` if it is one of ACTION_RECORD_MODES, else a ValueError naming the choices."""
    if not any(mode is m or (isinstance(m, str) and mode == m) for m in ACTION_RECORD_MODES):
        raise ValueError(
            f"action_record must be False, True (successes), {EVERY!r} (every episode) or {AUTO!r} (every "
            f"episode in a world that persists); got {mode!r}"
        )
    return mode


def scope_of(trajectory: Trajectory) -> str | None:
    """The persistent world an episode was played in ("textworld/1", as the environment's
    `world_of` names it in the trajectory's metadata); None when it names none."""
    return trajectory.metadata.get("world") or None


def mode_for(mode: bool | str, task: str, trajectory: Any) -> bool | str:
    """The mode in force for one episode: AUTO is EVERY for an episode that names the world that
    persists it was played in (`scope_of`), False otherwise; any other mode is itself."""
    if mode != AUTO:
        return mode
    return EVERY if scope_of(Trajectory.coerce(trajectory, task=task)) is not None else False


def _content(actions: list[str], places: list[Place], scope: str | None) -> str:
    seen = format_places(places)
    return scoped(scope) + " || ".join(part for part in (format_actions(actions), seen) if part)


def action_record(task: str, trajectory: Any, won: bool = True, places: bool = False) -> Lesson | None:
    """The memory item of an episode's accepted actions (`won`: the episode was judged a
    success), with the places it saw and, first, the world it was played in (`scope_of`) when
    `places` and the episode names its world. None when it took no action and saw no place,
    and for a lost episode with `places` in no world that persists (its way leads nowhere). The
    start is kept when the whole does not fit: a route is read from where every episode starts
    (actions are shortened first, then the places seen last are dropped)."""
    trajectory = Trajectory.coerce(trajectory, task=task)
    scope = scope_of(trajectory) if places else None
    if places and scope is None and not won:
        return None  # a lost episode is a map only of a world that persists
    actions = accepted_actions(trajectory)
    where = seen_places(trajectory) if scope else []
    if not actions and not where:
        return None
    content = _content(actions, where, scope)
    while len(content) > CONTENT_MAX and len(actions) > 1:
        actions = actions[:-1]
        content = _content(actions, where, scope)
    while len(content) > CONTENT_MAX and len(where) > 1:
        where = where[:-1]
        content = _content(actions, where, scope)
    if won:
        title, description = (
            f"Actions that did it: {task}",
            f"The actions a past episode in this environment won with: {task}",
        )
    else:
        title = f"Actions taken, not won: {task}"
        description = f"Where a past episode in this environment went and what it took, without winning: {task}"
    return Lesson(
        title=clip(title, TITLE_MAX), description=clip(description, DESCRIPTION_MAX), content=clip(content, CONTENT_MAX)
    )
