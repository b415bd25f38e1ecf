"""The self-consistency judge: the majority of several rationale-then-verdict samples.

`samples` calls of the rationale judge's prompt; the verdict is the label more than half of them
gave, `indeterminate` when no label has more than half. The first call is the rationale judge's
(same prompt, same settings); the others are sampled (their own rollout id and `temperature`, so
DSPy's cache never serves one sample for another). It stops once a majority is certain: 2 calls
when the first two of 3 agree.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import dspy

from rbdspy.core.lm_errors import attempt
from rbdspy.core.plan import Gather, Plan
from rbdspy.judge.base import DEFAULT_MAX_CHARS, BaseJudge, indeterminate, written_verdict
from rbdspy.judge.rationale import rationale_predict
from rbdspy.render import DEFAULT_BUDGET_TOKENS
from rbdspy.types import Verdict

DEFAULT_SAMPLES = 3
DEFAULT_SAMPLE_TEMPERATURE = 0.7


class SelfConsistencyJudge(BaseJudge):
    """The majority verdict of `samples` rationale-then-verdict calls (see the module docstring);
    returns `votes` (label -> count) besides the verdict.

    Args (besides `BaseJudge`'s):
        samples: how many samples at most.
        temperature: the sampled calls' temperature (every call but the first).
    """

    design = "self-consistency"

    def __init__(
        self,
        max_chars: int = DEFAULT_MAX_CHARS,
        *,
        renderer: Any = DEFAULT_BUDGET_TOKENS,
        samples: int = DEFAULT_SAMPLES,
        temperature: float = DEFAULT_SAMPLE_TEMPERATURE,
    ):
        if not isinstance(samples, int) or samples < 1:
            raise ValueError(f"samples must be a positive int; got {samples!r}")
        super().__init__(max_chars, renderer=renderer)
        self.samples, self.temperature = samples, temperature
        self.predict = rationale_predict(self.renderer)  # the rationale judge's prompt and name

    def _sample(self, inputs: dict, index: int) -> Plan:
        """One sample: the first is the rationale judge's call; the others carry their own rollout
        id and a temperature, so they are sampled and never answered from DSPy's cache."""
        call = inputs if index == 0 else {**inputs, "config": {"rollout_id": index, "temperature": self.temperature}}
        pred, error = yield from attempt(self.predict, call, f"judge sample {index}")
        return indeterminate("judge call failed", error) if error is not None else written_verdict(pred)

    def _plan(self, task: str, trajectory: Any) -> Plan:
        inputs = self._inputs(task, trajectory)
        majority = self.samples // 2 + 1
        verdicts = yield Gather([self._sample(inputs, i) for i in range(majority)])
        first = verdicts[0].label
        if not (first != "indeterminate" and all(v.label == first for v in verdicts)):
            verdicts += yield Gather([self._sample(inputs, i) for i in range(majority, self.samples)])
        votes = Counter(v.label for v in verdicts)
        return dspy.Prediction(verdict=majority_verdict(verdicts, self.samples), votes=dict(votes))


# Not `dspy.majority`: it returns the most common answer among those given (a tie goes to the
# earlier one, and an answer it cannot read is dropped), while this judge writes a label only
# when more than half of all `samples` asked gave it: an indeterminate sample counts against
# both labels, a tie is indeterminate, and the samples it skipped once the majority was certain
# still count in the denominator.
def majority_verdict(verdicts: list[Verdict], samples: int) -> Verdict:
    """The label more than half of `samples` gave (an indeterminate sample counts for neither
    label), with that label's first rationale; else indeterminate."""
    votes = Counter(v.label for v in verdicts)
    for label in ("success", "failure"):
        if votes[label] * 2 > samples:
            rationale = next(v.rationale for v in verdicts if v.label == label)
            return Verdict(label=label, rationale=f"{votes[label]} of {samples} samples: {label}. {rationale}"[:2000])
    tally = ", ".join(f"{votes[label]} {label}" for label in ("success", "failure", "indeterminate") if votes[label])
    return indeterminate(f"the samples split ({tally} of {samples})")
