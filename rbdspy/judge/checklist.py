"""The checklist judge: the requirements for success, each checked against the observations.

The requirements come from the task and from what the trajectory revealed on the way (e.g. a
recipe the agent read); the verdict is a success only when every one is met. One call, a longer
answer than the rationale judge's.
"""

from __future__ import annotations

from typing import Any

import dspy

from rbdspy.core.lm_errors import attempt
from rbdspy.core.plan import Plan
from rbdspy.judge.base import DEFAULT_MAX_CHARS, BaseJudge, indeterminate
from rbdspy.render import DEFAULT_BUDGET_TOKENS
from rbdspy.signatures import JudgeChecklist
from rbdspy.types import Verdict


class ChecklistJudge(BaseJudge):
    """One `JudgeChecklist` call (`checklist`); returns `checks` (requirement, evidence, met)
    besides the verdict. No requirement listed is indeterminate. See `BaseJudge` for the arguments."""

    design = "checklist"

    def __init__(self, max_chars: int = DEFAULT_MAX_CHARS, *, renderer: Any = DEFAULT_BUDGET_TOKENS):
        super().__init__(max_chars, renderer=renderer)
        self.checklist = dspy.Predict(JudgeChecklist)  # its prompt has NOT_SHOWN_RULE already

    def _plan(self, task: str, trajectory: Any) -> Plan:
        pred, error = yield from attempt(self.checklist, self._inputs(task, trajectory), "judge checklist")
        if error is not None:
            return dspy.Prediction(verdict=indeterminate("judge call failed", error), checks=[])
        checks = _checks(getattr(pred, "requirements", None))
        if not checks:
            return dspy.Prediction(verdict=indeterminate("judge listed no requirements"), checks=[])
        label = "success" if all(c["met"] for c in checks) else "failure"
        rationale = "; ".join(
            f"{'met' if c['met'] else 'NOT met'}: {c['requirement']}" + (f" ({c['evidence']})" if c["evidence"] else "")
            for c in checks
        )
        return dspy.Prediction(verdict=Verdict(label=label, rationale=rationale[:2000]), checks=checks)


def _checks(value: Any) -> list[dict]:
    """The checklist's requirements as plain dicts, leaving out entries with no requirement."""
    out = []
    for entry in value if isinstance(value, (list, tuple)) else []:
        get = entry.get if isinstance(entry, dict) else (lambda k, e=entry: getattr(e, k, None))
        requirement = str(get("requirement") or "").strip()
        if requirement:
            met = get("met")
            met = met if isinstance(met, bool) else str(met).strip().lower() in ("true", "yes", "met")
            out.append(
                {"requirement": requirement[:300], "evidence": str(get("evidence") or "").strip()[:300], "met": met}
            )
    return out
