"""Token budgets for rendered trajectories: how tokens are counted, the budgets rbdspy's modules
use, the rule a prompt gains when what it reads may be cut, and what a rendering reports.

Tokens are counted by `estimate_tokens`: characters / 3.5, rounded up. The embedded models'
tokenizer is not available without loading the model, and on the English these environments
print a BPE tokenizer averages about 4 characters per token, so the estimate errs on the side of
fewer tokens shown than the budget allows. A renderer can be given a real tokenizer instead
(`EvidenceRenderer(count_tokens=...)`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

CHARS_PER_TOKEN = 3.5
# About the prompt cost of `Trajectory.render`'s 6,000 characters (6000 / 3.5 = 1,714 tokens), with
# more evidence in it.
DEFAULT_BUDGET_TOKENS = 1800
# The distiller's budget, shared by the k attempts it contrasts: about the 9,000 characters it
# shares when it renders by characters (`renderer=None`).
DISTILLER_BUDGET_TOKENS = 2600
MIN_BUDGET_TOKENS = 200
# The companion instruction for any prompt that reads a rendered trajectory and judges it.
NOT_SHOWN_RULE = (
    "A long trajectory may be shown compressed or with parts left out; a note then says exactly what. "
    "Never judge a trajectory a failure because of steps you were not shown: judge the steps you see, "
    "above all the last ones."
)


def estimate_tokens(text: str) -> int:
    """A cheap, deterministic token count: ceil(characters / 3.5)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass(frozen=True)
class Cut:
    """Something the rendering left out: `kind` is "shortened" (part of a step's text),
    "folded" (observations not shown, their actions listed), or "left_out" (whole steps);
    `steps` the step indices affected; `tokens` the estimated tokens removed."""

    kind: str
    steps: tuple[int, ...]
    tokens: int


@dataclass(frozen=True)
class Rendering:
    """A rendered trajectory: the text, its estimated tokens, what was cut and what compressed."""

    text: str
    tokens: int
    budget_tokens: int
    cuts: tuple[Cut, ...] = ()
    compressed: dict[str, int] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """True when nothing was cut (compression alone loses no information a reader needs)."""
        return not self.cuts
