"""The final-goal judge design: did the last observations show the task's final goal reached?

A small model asked "did the agent succeed?" of a whole trajectory answers from the agent's
progress, and calls a trajectory that stopped one step short a success. Asked two narrow questions
instead, it notices:

1. `JudgeFinalGoal` reads the task and the last actions (each with the observation that answered
   it, shown whole up to a cap): what is the task's final goal, which observation shows it reached
   (quoted), and is it reached? "No" is a failure.
2. The quote is grounded in code: the step among the last ones that shares the most words with it.
   A quote of the agent's own action stands for the observation that answered that action (what
   the agent did is not evidence; what the environment said is); a quote that matches nothing
   stands for the last observation.
3. `VerifyGoalReached` reads the task, the goal and that one observation: does it show the goal
   reached? Success only if it does.

Two calls, both short (the task and the last steps, not the whole trajectory), so the design costs
about half of today's one call on the embedded model.
"""

from __future__ import annotations

import re
from typing import Any

import dspy

from rbdspy.modules.lm_errors import attempt, indeterminate
from rbdspy.modules.plan import Plan
from rbdspy.types import OBSERVATION_ROLES, Step, Trajectory, Verdict

# How many of the last actions are shown, and how much of each observation (the last observations
# are where a finished task shows it; a room description longer than this keeps its start).
LAST_ACTIONS = 3
LAST_OBSERVATION_CHARS = 600
_WORD = re.compile(r"[a-z0-9]+")


def last_window(trajectory: Trajectory, actions: int = LAST_ACTIONS) -> list[tuple[int, Step]]:
    """(index, step) from the `actions`-th last action to the end; empty when nothing acted."""
    acting = [i for i, step in enumerate(trajectory.steps) if step.role not in OBSERVATION_ROLES]
    start = acting[-actions:][0] if acting else len(trajectory.steps)
    return list(enumerate(trajectory.steps))[start:]


def _shown(step: Step) -> str:
    text = " ".join(step.content.split())
    if step.role in OBSERVATION_ROLES and len(text) > LAST_OBSERVATION_CHARS:
        text = text[:LAST_OBSERVATION_CHARS] + " ..."
    return text


def last_steps(trajectory: Trajectory, actions: int = LAST_ACTIONS) -> str:
    """The last `actions` actions, each with the observations that answered it, numbered as the
    rendered trajectory numbers them; an observation longer than LAST_OBSERVATION_CHARS keeps its
    start. Whitespace runs collapse."""
    window = last_window(trajectory, actions)
    if not window:
        return "(the agent took no action)"
    lines = [f"[{i}] {step.role}: {_shown(step)}" for i, step in window]
    if window[-1][1].role not in OBSERVATION_ROLES:
        lines.append("(no observation after the last action)")
    return "\n".join(lines)


def tail_of_text(text: str) -> str:
    """The end of an already rendered trajectory, as much text as `last_steps` shows at most."""
    text = text.strip()
    limit = LAST_ACTIONS * LAST_OBSERVATION_CHARS
    return text if len(text) <= limit else "..." + text[-limit:]


def grounded_observation(window: list[tuple[int, Step]], quote: str) -> str | None:
    """The observation a quote stands for: the step of `window` sharing the most of the quote's
    words (an observation wins a tie); an action stands for the observation after it; a quote
    sharing no word, for the last observation. None when the window holds no observation."""
    observations = [k for k, (_, step) in enumerate(window) if step.role in OBSERVATION_ROLES]
    if not observations:
        return None
    words = set(_WORD.findall(quote.lower()))
    overlap = [(len(words & set(_WORD.findall(step.content.lower()))), step.role in OBSERVATION_ROLES, k)
               for k, (_, step) in enumerate(window)]  # fmt: skip
    best_overlap, _, best = max(overlap)
    if best_overlap == 0:
        best = observations[-1]
    after = [k for k in observations if k >= best]
    k = after[0] if after else observations[-1]
    return _shown(window[k][1])


def final_goal_plan(find: dspy.Module, verify: dspy.Module, task: str, trajectory: Trajectory | str) -> Plan:
    """The design's calls as a plan (see the module docstring); returns the Prediction."""
    as_text = isinstance(trajectory, str)
    window = [] if as_text else last_window(trajectory)
    steps = tail_of_text(trajectory) if as_text else last_steps(trajectory)
    pred, error = yield from attempt(find, {"task": task, "last_steps": steps}, "judge final goal")
    if error is not None:
        return _result(indeterminate("judge call failed", error))
    reached = _boolean(getattr(pred, "final_goal_reached", None))
    goal = str(getattr(pred, "final_goal", "") or "").strip()[:300]
    quote = str(getattr(pred, "evidence", "") or "").strip()[:500]
    if reached is None:
        return _result(indeterminate("judge did not say whether the final goal was reached"), goal)
    if not reached:
        return _result(Verdict(label="failure", rationale=f"final goal: {goal}; not shown reached"), goal, False)
    observation = quote if as_text else grounded_observation(window, quote)
    if observation is None:
        return _result(
            Verdict(label="failure", rationale=f"final goal: {goal}; no observation after the last actions"),
            goal,
            False,
        )
    check, error = yield from attempt(
        verify, {"task": task, "goal": goal, "observation": observation}, "judge verify goal"
    )
    if error is not None:
        return _result(indeterminate("judge verification failed", error), goal)
    verified = _boolean(getattr(check, "reached", None))
    if verified is None:
        return _result(indeterminate("judge did not say whether the observation shows the goal"), goal)
    label = "success" if verified else "failure"
    rationale = (
        f"final goal: {goal}; " + ("shown reached by" if verified else "not shown reached by") + f": {observation}"
    )
    return _result(Verdict(label=label, rationale=rationale[:2000]), goal, verified, observation)


def _result(verdict: Verdict, goal: str = "", reached: bool | None = None, evidence: str = "") -> dspy.Prediction:
    return dspy.Prediction(verdict=verdict, final_goal=goal, final_goal_reached=reached, evidence=evidence)


def _boolean(value: Any) -> bool | None:
    """A bool, or its usual spellings ("true", "yes", ...); anything else is None."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower() if value is not None else ""
    return True if text in ("true", "yes") else False if text in ("false", "no") else None
