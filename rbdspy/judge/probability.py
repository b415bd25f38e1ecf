"""The probability judge design: how likely the LM finds "success", not which word it wrote.

A small model's written verdict is mostly its bias: the embedded 1.5B model calls most
TextWorld-Express failures successes and most ScienceWorld successes failures. The probability it
gives the first token of "success" against "failure" still ranks trajectories, so this design
reads that probability (`label_probability`) and applies a threshold chosen on labelled train
records (`DEFAULT_PROBABILITY_BAND`, or a band calibrated on the environment's own trajectories),
with a band around it where it abstains (`indeterminate`, nothing written).

Each question is one short call that writes one word. The score is the mean of its terms'
log-odds (a mean, so a term that cannot be asked of a trajectory leaves the scale alone):

- "last-action", "last-steps", "recent-steps": `JudgeLastSteps` on the task and the last one,
  three or six actions with their observations, where a finished task shows its final goal
  reached and a trajectory that stopped short shows it is not. Each window misleads the small
  model on different trajectories (one action hides what led up to it; six bury the last answer
  among the others); with the action list, the four ranked the train records better than any
  one of them (docs/concepts/judge.md);
- "actions": `JudgeActions` on every action in order with the last answer (`action_list`), where
  a step skipped, two steps swapped or a final step missing shows in a few hundred tokens;
- "progress": the last-steps log-odds minus those of the same question asked one action earlier
  (how much the last action moved the LM towards "success"; not among the default views: the
  windows and the action list rank trajectories better on train records);
- "trajectory": `JudgeVerdict` on the whole rendered trajectory (opt-in: its best threshold
  differs between the two environment families, which a threshold chosen on one family cannot
  follow).

The default, ("last-action", "last-steps", "recent-steps", "actions"), is four calls of a few
hundred tokens each, three when the windows show the same steps (a short trajectory: each
distinct prompt is asked once), one when the agent acted once (a program that answers: its one
window is its whole list of actions too). An LM that returns no logprobs (many hosted models do
not) still works: its written word counts as probability 1 or 0 (`_MIN_P` keeps the log-odds
finite).
"""

from __future__ import annotations

import math

import dspy

from rbdspy.core.lm_errors import attempt
from rbdspy.core.logprobs import label_probability, with_logprobs
from rbdspy.core.plan import Gather, Plan
from rbdspy.judge.base import indeterminate
from rbdspy.judge.last_steps import (
    LAST_ACTIONS,
    RECENT_ACTIONS,
    action_indices,
    action_list,
    last_steps,
    tail_of_text,
)
from rbdspy.types import Trajectory, Verdict

# Questions a view asks: the last-steps question over a window of RECENT_ACTIONS, LAST_ACTIONS or
# one action; the action-list question; the whole-trajectory question; and "progress", the
# last-steps question's change over the last action.
STEP_VIEWS = {"last-action": 1, "last-steps": LAST_ACTIONS, "recent-steps": RECENT_ACTIONS}
PROBABILITY_VIEWS = ("last-action", "last-steps", "recent-steps", "actions", "progress", "trajectory")
DEFAULT_PROBABILITY_VIEWS = ("last-action", "last-steps", "recent-steps", "actions")
LABELS = ("success", "failure")
_MIN_P = 1e-4  # a label outside the alternatives still has some probability; log-odds stay finite


def log_odds(p: float) -> float:
    p = min(max(p, _MIN_P), 1 - _MIN_P)
    return math.log(p / (1 - p))


def before_last(trajectory: Trajectory) -> Trajectory:
    """The trajectory as it stood before its last action: no final answer yet (the same steps
    when nothing acted)."""
    acting = action_indices(trajectory)
    steps = trajectory.steps[: acting[-1]] if acting else trajectory.steps
    return trajectory.model_copy(update={"steps": steps, "final_answer": None})


def questions(task: str, trajectory: Trajectory | str, rendered: str, views: tuple[str, ...]) -> dict[str, tuple]:
    """The questions the design asks of a trajectory, by name: (which predictor asks, its
    inputs). A trajectory given as text has no steps to count back or list: every last-steps
    view is its tail, asked once as "last-steps", and "actions" and "before-last" are not asked;
    a trajectory with a single action has nothing before it to compare with, and no list that
    its one window does not already show."""
    as_text = isinstance(trajectory, str)
    asked = {}
    if "trajectory" in views:
        asked["trajectory"] = ("trajectory", {"task": task, "trajectory": rendered})
    windows = {view: STEP_VIEWS[view] for view in STEP_VIEWS if view in views}
    if "progress" in views:
        windows["last-steps"] = LAST_ACTIONS
    if as_text and windows:
        return asked | {"last-steps": ("last-steps", {"task": task, "last_steps": tail_of_text(trajectory)})}
    for view, actions in sorted(windows.items(), key=lambda item: -item[1]):
        asked[view] = ("last-steps", {"task": task, "last_steps": last_steps(trajectory, actions)})
    if as_text:
        return asked
    if "actions" in views and len(action_indices(trajectory)) > 1:  # one action: its window is the list
        asked["actions"] = ("actions", {"task": task, "actions": action_list(trajectory)})
    earlier = before_last(trajectory)
    if "progress" in views and action_indices(earlier):
        asked["before-last"] = ("last-steps", {"task": task, "last_steps": last_steps(earlier)})
    return asked


def answered_by_question(asked: dict[str, tuple]) -> dict[str, str]:
    """Each question of `questions`, mapped to the first question with the same prompt: a short
    trajectory shows the same window to several views, and each distinct prompt is asked once
    (the distinct values are the LM calls)."""
    first: dict[tuple, str] = {}
    return {
        question: first.setdefault((which, *sorted(inputs.items())), question)
        for question, (which, inputs) in asked.items()
    }


def question_demos(
    task: str, trajectory: Trajectory, rendered: str, label: str, views: tuple[str, ...]
) -> dict[str, dspy.Example]:
    """A labelled trajectory as one demo for each predictor the design asks through (keys as
    `questions` names them: "last-steps", "actions", "trajectory"): the question that predictor
    asks of it, answered with `label`. The last-steps predictor is shown the middle window it
    asks (three actions when "last-steps" is a view), so its demos stay short."""
    asked = questions(task, trajectory, rendered, views)
    demos: dict[str, dspy.Example] = {}
    preferred = sorted(asked, key=lambda q: q != "last-steps")  # the three-action window first
    for question in preferred:
        which, inputs = asked[question]
        if question != "before-last" and which not in demos:
            demos[which] = dspy.Example(**inputs, verdict=label).with_inputs(*inputs)
    return demos


def lm_calls(trajectory: Trajectory | str, views: tuple[str, ...] = DEFAULT_PROBABILITY_VIEWS) -> int:
    """How many LM calls the design makes for `trajectory` (each distinct prompt once): with the
    default views 4 for four actions or more, 3 for two or three, 1 for one."""
    task = "" if isinstance(trajectory, str) else trajectory.task
    return len(set(answered_by_question(questions(task, trajectory, "", views)).values()))


def probability_plan(
    predictors: dict[str, dspy.Module],
    task: str,
    trajectory: Trajectory | str,
    rendered: str,
    views: tuple[str, ...],
    band: tuple[float, float],
) -> Plan:
    """The design's calls as a plan. `predictors` maps "trajectory", "last-steps" and "actions"
    to their Predicts; `views` names the score's terms; `band` is (below: failure, at or above:
    success), in between indeterminate; `questions` says what is asked."""
    asked = questions(task, trajectory, rendered, views)
    answered_by = answered_by_question(asked)
    names = list(dict.fromkeys(answered_by.values()))
    calls = [(predictors[asked[q][0]], asked[q][1], f"judge {q}") for q in names]
    answers = yield Gather(
        [attempt(predictor, with_logprobs(predictor, call), what) for predictor, call, what in calls]
    )
    answered = dict(zip(names, answers, strict=True))
    probabilities: dict[str, float] = {}
    for question in asked:
        pred, error = answered[answered_by[question]]
        if error is not None:
            return _result(indeterminate(f"judge {question} call failed", error), probabilities)
        p = label_probability(getattr(pred, "logprobs", None), LABELS)
        if p is None:  # no logprobs from this LM: the written word is the whole answer
            label = str(getattr(pred, "verdict", "") or "").strip().lower()
            if label not in LABELS:
                return _result(
                    indeterminate(f"judge {question} answered {label!r}, not success/failure"), probabilities
                )
            p = 1.0 if label == "success" else 0.0
        probabilities[question] = p
    score = 1 / (1 + math.exp(-score_log_odds(probabilities, views)))
    shown = ", ".join(f"{question} {p:.2f}" for question, p in probabilities.items())
    low, high = band
    if low <= score < high:
        return _result(
            indeterminate(f"P(success) {score:.2f} is within the abstention band [{low:.2f}, {high:.2f}) ({shown})"),
            probabilities,
            score,
        )
    label = "success" if score >= high else "failure"
    return _result(Verdict(label=label, rationale=f"P(success) {score:.2f} ({shown})"), probabilities, score)


def score_log_odds(probabilities: dict[str, float], views: tuple[str, ...]) -> float:
    """The mean log-odds of the terms of `views`, from each question's P(success). A mean, not a
    sum, so one threshold serves a trajectory that some questions could not be asked of: a
    last-steps view of a trajectory given as text reads its tail ("last-steps"), and "actions"
    or "progress" without its answer counts nothing."""
    terms = []
    for view in views:
        if view == "progress":
            if "before-last" in probabilities and "last-steps" in probabilities:
                terms.append(log_odds(probabilities["last-steps"]) - log_odds(probabilities["before-last"]))
            continue
        p = probabilities.get(view)
        if p is None and view in STEP_VIEWS:
            p = probabilities.get("last-steps")
        if p is not None:
            terms.append(log_odds(p))
    return sum(terms) / len(terms) if terms else 0.0


def _result(verdict: Verdict, probabilities: dict[str, float], score: float | None = None) -> dspy.Prediction:
    return dspy.Prediction(verdict=verdict, probability=score, probabilities=dict(probabilities))
