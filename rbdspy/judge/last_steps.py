"""The end of a trajectory, shown on its own: where a finished task shows its final goal reached.

A small model asked about a whole trajectory answers from the agent's progress; asked about the
last few actions and what the environment answered, it is asked about the evidence that decides
most outcomes. The probability judge (rbdspy/judge/probability.py) reads these.
"""

from __future__ import annotations

from rbdspy.core.roles import OBSERVATION_ROLES
from rbdspy.types import Step, Trajectory

# How many of the last actions are shown, and how much of each observation (the last observations
# are where a finished task shows it; a room description longer than this keeps its start).
LAST_ACTIONS = 3
RECENT_ACTIONS = 6  # a longer window: the steps that led up to the end
LAST_OBSERVATION_CHARS = 600
# The action list keeps at most this many actions, above the longest trajectory of rbdspy's
# datasets, so that only a runaway one is cut: the first LISTED_HEAD and the last ones, with a
# line saying how many were left out between them.
MAX_LISTED_ACTIONS = 200
LISTED_HEAD = 50
# Steps that tell the agent something rather than record what it did.
INPUT_ROLES = ("user", "system")


def is_action(step: Step) -> bool:
    """A step the agent took (not an observation, not the task or a system message)."""
    return step.role not in OBSERVATION_ROLES and step.role not in INPUT_ROLES


def action_indices(trajectory: Trajectory) -> list[int]:
    """Where in the trajectory the agent acted."""
    return [i for i, step in enumerate(trajectory.steps) if is_action(step)]


def last_window(trajectory: Trajectory, actions: int = LAST_ACTIONS) -> list[tuple[int, Step]]:
    """(index, step) from the `actions`-th last action to the end; empty when nothing acted."""
    acting = action_indices(trajectory)
    start = acting[-actions:][0] if acting else len(trajectory.steps)
    return list(enumerate(trajectory.steps))[start:]


def _shown(trajectory: Trajectory, i: int) -> str:
    step = trajectory.steps[i]
    text = " ".join(trajectory.action_text(i).split())
    if step.role in OBSERVATION_ROLES and len(text) > LAST_OBSERVATION_CHARS:
        text = text[:LAST_OBSERVATION_CHARS] + " ..."
    return text


def last_steps(trajectory: Trajectory, actions: int = LAST_ACTIONS) -> str:
    """The last `actions` actions, each with the observations that answered it, numbered as the
    rendered trajectory numbers them, then the final answer if there is one; an observation
    longer than LAST_OBSERVATION_CHARS keeps its start. Whitespace runs collapse."""
    window = last_window(trajectory, actions)
    final = " ".join((trajectory.final_answer or "").split())
    if not window and not final:
        return "(the agent took no action)"
    lines = [f"[{i}] {step.role}: {_shown(trajectory, i)}" for i, step in window]
    if window and is_action(window[-1][1]) and not final:
        lines.append("(no observation after the last action)")
    if final:  # what the agent answered: for a program that answers, the evidence itself
        lines.append(f"[final answer] {final[:LAST_OBSERVATION_CHARS]}")
    return "\n".join(lines)


def action_list(trajectory: Trajectory) -> str:
    """Every action, numbered in order, then the environment's answer to the last one (its start,
    LAST_OBSERVATION_CHARS at most) and the final answer if there is one: the whole plan in a few
    hundred tokens, where a skipped, swapped or missing final step shows. Past
    MAX_LISTED_ACTIONS, the first LISTED_HEAD and the last actions, and how many were not shown."""
    acting = action_indices(trajectory)
    lines = [f"{n}. {' '.join(trajectory.action_text(i).split())}" for n, i in enumerate(acting, start=1)]
    if len(lines) > MAX_LISTED_ACTIONS:  # a very long run: the start and the end, and what was cut
        tail = MAX_LISTED_ACTIONS - LISTED_HEAD
        cut = len(lines) - MAX_LISTED_ACTIONS
        lines = [*lines[:LISTED_HEAD], f"({cut} actions not shown)", *lines[-tail:]]
    if not lines:
        lines.append("(the agent took no action)")
    if trajectory.steps and trajectory.steps[-1].role in OBSERVATION_ROLES:
        lines.append(f"last answer: {_shown(trajectory, len(trajectory.steps) - 1)}")
    final = " ".join((trajectory.final_answer or "").split())
    if final:
        lines.append(f"final answer: {final[:LAST_OBSERVATION_CHARS]}")
    return "\n".join(lines)


def tail_of_text(text: str) -> str:
    """The end of an already rendered trajectory, as much text as `last_steps` shows at most."""
    text = text.strip()
    limit = LAST_ACTIONS * LAST_OBSERVATION_CHARS
    return text if len(text) <= limit else "..." + text[-limit:]
