"""Written judging strategies: the candidate instructions the `pool` recipe scores for the judge.

A 1.5B proposer (MIPROv2's, GEPA's reflection) rarely writes an instruction better than the
hand-written one; these are written by hand instead, each a different way to weigh the evidence
of a text-environment trajectory, and the recipe keeps whichever scores best on held-out train
records (the hand-written prompt on a tie). Each is a whole instruction: it replaces the
predictor's, so each says what counts as success and that doubt means failure, as the
hand-written one does.

What the strategies say is how to read the evidence, not what to output: a design's output fields
(a checklist's requirements, a confidence) keep their own descriptions. They name no object, room
or game of any environment, so a strategy that wins on one environment family can be tried on
another without carrying its vocabulary.
"""

from __future__ import annotations

from rbdspy.render import NOT_SHOWN_RULE

_STRICT = (
    "If you are unsure, the verdict is failure: a wrong success teaches future agents a wrong lesson, while a wrong "
    "failure only costs one lesson."
)

# name -> instruction. Names are short, for logs (`recipe_val_scores`); the order is the order of
# the search, so on a tie the earlier one wins.
JUDGE_POOL: dict[str, str] = {
    "final-state": (
        "You judge whether an AI agent accomplished its task in a text environment. Start from the end: find the "
        "observation that shows the goal state reached (the environment saying the task is done, or describing the "
        "world as the task asked it to be). Read the last observations first and work backwards only to check that "
        "the state you found is the one the task asked for. The verdict is success only when such an observation "
        "exists; a trajectory that stops before it is a failure, however close it came. " + _STRICT
    ),
    "requirements": (
        "You judge whether an AI agent accomplished its task in a text environment. First write down every "
        "requirement for success: those the task states and those the trajectory revealed on the way (instructions "
        "or a recipe the agent read, a target the environment named). Then, for each requirement, find the step "
        "whose observation shows it met. The verdict is success only when every requirement has such a step; one "
        "requirement without evidence makes it a failure. " + _STRICT
    ),
    "observations-only": (
        "You judge whether an AI agent accomplished its task in a text environment. Only the environment's "
        "observations are evidence. The agent's actions say what it tried, not what happened, and its statements, "
        "plans and claims of success count for nothing. An action the environment refused, ignored or answered with "
        "an error or 'nothing happens' did not happen. The verdict is success only when the observations alone show "
        "the task done. " + _STRICT
    ),
    "shown-steps": (
        "You judge whether an AI agent accomplished its task in a text environment. The trajectory may be shown "
        "compressed: repeated observations replaced by a pointer, parts of long observations or whole middle steps "
        "left out, with a note saying what. Judge only what you are shown, above all the last steps: a step that was "
        "left out is not a missing step, and must never be the reason for a failure. The verdict is success when the "
        "steps shown end in an observation that confirms the task done, and failure when they end without one or "
        "show the task undone. " + _STRICT
    ),
    "status-lines": (
        "You judge whether an AI agent accomplished its task in a text environment. Environments report progress in "
        "lines of their own: a score that rises, a message that the task or game is complete, won, lost or over, a "
        "goal marked done. Look for these lines, and for the last one in the trajectory. A final message of "
        "completion or a win means success; a loss, a game over without completion, or a trajectory that ends with "
        "no such message and no observation showing the goal reached means failure. A score that went up is "
        "progress, not completion. " + _STRICT
    ),
    "order-and-effects": (
        "You judge whether an AI agent accomplished its task in a text environment. Walk through the actions in "
        "order and check that each one had the effect it needed, as its observation reports: a step that needed an "
        "earlier one (holding an object before using it, opening before taking out, reaching a place before acting "
        "there) works only if that earlier step really came first. A required step that was skipped, done in the "
        "wrong order, or rejected by the environment leaves the task undone, even when later steps look right. The "
        "verdict is success only when the necessary steps all took effect and the final observation shows the goal "
        "reached. " + _STRICT
    ),
}


def fitted(strategy: str, current: str) -> str:
    """`strategy` as the instruction of a predictor whose instruction is now `current`: a prompt
    that reads compressed trajectories carries `NOT_SHOWN_RULE`, and keeps it under every
    strategy, so no candidate wins by failing trajectories for steps the renderer left out."""
    # Whitespace-blind: a signature docstring carries the rule wrapped over several lines.
    if _flat(NOT_SHOWN_RULE) in _flat(current) and _flat(NOT_SHOWN_RULE) not in _flat(strategy):
        return f"{strategy}\n\n{NOT_SHOWN_RULE}"
    return strategy


def _flat(text: str) -> str:
    return " ".join(text.split())
