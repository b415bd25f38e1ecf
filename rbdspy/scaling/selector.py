"""TrajectorySelector: best-of-N over several attempts at one task (parallel MaTTS and the
vanilla TTS baseline answer with the attempt it picks)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import dspy

from rbdspy.core.lm_errors import attempt
from rbdspy.core.plan import Plan, arun, run
from rbdspy.scaling.rollout import step_count
from rbdspy.signatures import SelectBestTrajectory
from rbdspy.types import Trajectory, Verdict

log = logging.getLogger(__name__)


def _outcome_text(outcome: bool | None) -> str:
    return "unknown" if outcome is None else ("success" if outcome else "failure")


def rule_choice(
    trajectories: Sequence[Trajectory], verdicts: Sequence[Verdict | None], outcomes: Sequence[bool | None]
) -> int:
    """The deterministic fallback: a known environment success first, then a judge success,
    then the fewest steps, then the earliest attempt."""

    def key(i: int):
        verdict = verdicts[i]
        return (
            outcomes[i] is not True,
            not (verdict is not None and verdict.is_success),
            step_count(trajectories[i]),
            i,
        )

    return min(range(len(trajectories)), key=key)


class TrajectorySelector(dspy.Module):
    """An LM picks the best of N attempts with `SelectBestTrajectory`'s rubric (progress toward
    the goal, efficiency, loops, severity of errors), seeing each attempt's judge verdict and,
    where the caller passes it, the environment's measured outcome.

    Returns `Prediction(index, rationale, method)` where `method` is:
    - "single": one attempt, no LM call;
    - "lm": the LM's pick;
    - "rule": the LM failed (error, or an index out of range), so the deterministic
      `rule_choice` decided (known environment success, then judge success, then fewest steps);
    - "outcome": the LM picked an attempt whose known outcome is failure while another's known
      outcome is success; the measured outcome wins and `rule_choice` decided.

    Outcomes are passed only by callers that trust them (see MaTTS `use_outcome`): selecting on
    the environment's own success flag turns best-of-N into an oracle (pass@k).
    """

    def __init__(self, max_chars: int = 9000):
        super().__init__()
        self.max_chars = max_chars
        self.select = dspy.Predict(SelectBestTrajectory)

    @staticmethod
    def _check(trajectories, verdicts, outcomes):
        if not trajectories:
            raise ValueError("TrajectorySelector needs at least one trajectory")
        verdicts = list(verdicts) if verdicts is not None else [None] * len(trajectories)
        outcomes = list(outcomes) if outcomes is not None else [None] * len(trajectories)
        if not len(trajectories) == len(verdicts) == len(outcomes):
            raise ValueError(
                f"got {len(trajectories)} trajectories, {len(verdicts)} verdicts and {len(outcomes)} outcomes; "
                "pass one of each per trajectory"
            )
        return [Trajectory.coerce(t) for t in trajectories], verdicts, outcomes

    def _inputs(self, task: str, trajectories, verdicts, outcomes) -> dict[str, str]:
        budget = max(500, self.max_chars // len(trajectories))
        blocks = []
        for i, (trajectory, verdict, outcome) in enumerate(zip(trajectories, verdicts, outcomes, strict=True)):
            label = verdict.label if verdict is not None else "not judged"
            header = (
                f"## Attempt {i} (judge verdict: {label}; measured outcome: {_outcome_text(outcome)}; "
                f"steps: {step_count(trajectory)})"
            )
            blocks.append(f"{header}\n{trajectory.render(budget)}")
        return {"task": task, "attempts": "\n\n".join(blocks)}

    def _decide(self, pred, trajectories, verdicts, outcomes) -> dspy.Prediction:
        rationale = str(getattr(pred, "rationale", "") or "").strip()[:2000]
        index = getattr(pred, "best_index", None)
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(trajectories):
            log.warning("selector answered index %r for %d attempts; using the rule", index, len(trajectories))
            return self._rule(trajectories, verdicts, outcomes, f"selector answered {index!r}")
        if outcomes[index] is False and any(o is True for o in outcomes):
            choice = rule_choice(trajectories, verdicts, outcomes)
            return dspy.Prediction(
                index=choice,
                rationale=f"measured outcome overrides the selector's pick {index}: {rationale}"[:2000],
                method="outcome",
            )
        return dspy.Prediction(index=index, rationale=rationale, method="lm")

    @staticmethod
    def _rule(trajectories, verdicts, outcomes, why: str) -> dspy.Prediction:
        return dspy.Prediction(
            index=rule_choice(trajectories, verdicts, outcomes), rationale=f"rule choice ({why})"[:2000], method="rule"
        )

    def _plan(self, task: str, trajectories, verdicts, outcomes) -> Plan:
        trajectories, verdicts, outcomes = self._check(trajectories, verdicts, outcomes)
        if len(trajectories) == 1:
            return dspy.Prediction(index=0, rationale="only one attempt", method="single")
        inputs = self._inputs(task, trajectories, verdicts, outcomes)
        pred, error = yield from attempt(self.select, inputs, "selector")
        if error is not None:  # an LM that misbehaves falls back to the rule
            return self._rule(trajectories, verdicts, outcomes, f"selector failed: {type(error).__name__}")
        return self._decide(pred, trajectories, verdicts, outcomes)

    def forward(self, task: str, trajectories: Sequence[Trajectory], verdicts=None, outcomes=None) -> dspy.Prediction:
        """`verdicts` (Verdict or None) and `outcomes` (bool or None), when given, one per trajectory."""
        return run(self._plan(task, trajectories, verdicts, outcomes))

    async def aforward(self, task: str, trajectories: Sequence[Trajectory], verdicts=None, outcomes=None):
        return await arun(self._plan(task, trajectories, verdicts, outcomes))
