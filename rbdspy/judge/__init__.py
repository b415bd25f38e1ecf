"""The judge stage: labels a trajectory success, failure or indeterminate.

- base.py: `BaseJudge`, what every judge design is and does (a Trajectory and its task in, a
  `Verdict` out; an LM problem is `indeterminate`, never an exception).
- judge.py: the designs by name (`judge_for(design, **options)`, JUDGE_DESIGNS) and `Judge`, the
  default design (`ProbabilityJudge`).
- probability_judge.py, rationale.py, checklist.py, self_consistency.py, confidence.py: one
  design each (`ProbabilityJudge`, the default; `RationaleJudge`, the paper's; `ChecklistJudge`;
  `SelfConsistencyJudge`; `ConfidenceJudge`).
- probability.py: the probability design's questions, P(success) from the LM's logprobs.
- calibration.py: placing the probability judge's band on labelled trajectories.
- last_steps.py: the end of a trajectory shown on its own (windows of the last actions, the list
  of every action), which the probability design asks about.
- trajectory_text.py: a trajectory in any accepted shape as the prompt text the judge reads (the
  extractors and the refiner read it through the same function).

Its prompts are in rbdspy/signatures/judge.py.
"""

from rbdspy.judge.base import BaseJudge
from rbdspy.judge.checklist import ChecklistJudge
from rbdspy.judge.confidence import ConfidenceJudge
from rbdspy.judge.judge import DEFAULT_JUDGE_DESIGN, JUDGE_DESIGNS, Judge, judge_for
from rbdspy.judge.probability_judge import ProbabilityJudge
from rbdspy.judge.rationale import RationaleJudge
from rbdspy.judge.self_consistency import SelfConsistencyJudge

__all__ = [
    "DEFAULT_JUDGE_DESIGN",
    "JUDGE_DESIGNS",
    "BaseJudge",
    "ChecklistJudge",
    "ConfidenceJudge",
    "Judge",
    "ProbabilityJudge",
    "RationaleJudge",
    "SelfConsistencyJudge",
    "judge_for",
]
