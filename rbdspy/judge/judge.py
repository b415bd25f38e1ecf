"""The judge designs, one class each, and `judge_for`, which builds one by name.

Each labels a trajectory success or failure and never lets an LM problem through as a verdict
(`BaseJudge`, rbdspy/judge/base.py). The probability judge is the default (`Judge`): a small
model's written verdict is mostly its bias, while the probability it gives "success" still ranks
trajectories, so it holds up on an environment family it was not tuned on (docs/concepts/judge.md):

- `ProbabilityJudge` ("probability", the default; rbdspy/judge/probability_judge.py): one word
  per short question about the trajectory's end and its list of actions, read as P(success) from
  the LM's logprobs and thresholded; the one design with a band to `calibrate`.
- `RationaleJudge` ("rationale", the paper's): a rationale, then the verdict, in one call.
- `ChecklistJudge` ("checklist"): the requirements for success, each checked against the
  observations; success only when every one is met. One call, a longer answer.
- `SelfConsistencyJudge` ("self-consistency"): the majority of `samples` rationale calls,
  `indeterminate` when no label has more than half.
- `ConfidenceJudge` ("confidence"): rationale, verdict and a confidence; below `threshold` the
  verdict is `indeterminate`, so nothing is written. One call.

`renderer=` (an `rbdspy.render.EvidenceRenderer`, a token budget, or any Trajectory -> str; by
default `EvidenceRenderer(DEFAULT_BUDGET_TOKENS)`) shows the trajectory compressed within a token
budget; the rationale and self-consistency prompts then gain `NOT_SHOWN_RULE` (the other designs'
prompts have it). `renderer=None` shows `Trajectory.render(max_chars)` instead, the rendering by characters.
"""

from __future__ import annotations

from typing import Any

# `X as X`: names re-exported from where they moved (every design was in this module once).
from rbdspy.judge.base import BaseJudge
from rbdspy.judge.checklist import ChecklistJudge
from rbdspy.judge.checklist import _checks as _checks
from rbdspy.judge.confidence import DEFAULT_CONFIDENCE_THRESHOLD as DEFAULT_CONFIDENCE_THRESHOLD
from rbdspy.judge.confidence import ConfidenceJudge
from rbdspy.judge.confidence import _unit_interval as _unit_interval
from rbdspy.judge.probability_judge import DEFAULT_PROBABILITY_BAND as DEFAULT_PROBABILITY_BAND
from rbdspy.judge.probability_judge import PROBABILITY_PREDICTORS as PROBABILITY_PREDICTORS
from rbdspy.judge.probability_judge import ProbabilityJudge
from rbdspy.judge.rationale import RationaleJudge
from rbdspy.judge.self_consistency import DEFAULT_SAMPLE_TEMPERATURE as DEFAULT_SAMPLE_TEMPERATURE
from rbdspy.judge.self_consistency import DEFAULT_SAMPLES as DEFAULT_SAMPLES
from rbdspy.judge.self_consistency import SelfConsistencyJudge
from rbdspy.judge.self_consistency import majority_verdict as majority_verdict

# The designs by name, as `--design`, the compile options and the benchmark records name them.
JUDGE_CLASSES: dict[str, type[BaseJudge]] = {
    cls.design: cls for cls in (RationaleJudge, ChecklistJudge, SelfConsistencyJudge, ConfidenceJudge, ProbabilityJudge)
}
JUDGE_DESIGNS = tuple(JUDGE_CLASSES)
DEFAULT_JUDGE_DESIGN = ProbabilityJudge.design  # the best out of distribution (docs/concepts/judge.md)

# The default judge: `Judge()`, `Judge(renderer=...)`, `Judge(band=...)`.
Judge = ProbabilityJudge


def judge_for(design: str, **options: Any) -> BaseJudge:
    """The judge of the design named `design` (one of JUDGE_DESIGNS), built with `options` (the
    arguments its class takes, e.g. `renderer=`; another design's option is a TypeError).
    For code that takes a design's name from a user: `--design`, compile and calibrate options."""
    cls = JUDGE_CLASSES.get(design)
    if cls is None:
        raise ValueError(f"design must be one of {', '.join(JUDGE_DESIGNS)}; got {design!r}")
    return cls(**options)
