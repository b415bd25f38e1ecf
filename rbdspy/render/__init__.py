"""rbdspy.render: a trajectory written as prompt text within a token budget.

- evidence.py: `EvidenceRenderer`, a trajectory within a token budget, compressed before it is
  cut, every cut named (by default what the judge, the extractors and the distiller read);
  `as_renderer`, what a module's `renderer=` accepts.
- layout.py: the evidence renderer's parts of a trajectory and their assembly under limits.
- budget.py: token counting, the budgets, `NOT_SHOWN_RULE`, and what a rendering reports.

The rendering by characters, what `Trajectory.render(max_chars)` writes, is the data model's own
(`rbdspy.types.render_by_characters`); this package sits above `rbdspy.types` and reads its
`Trajectory`. A trajectory of another shape (a message list, dspy.ReAct's dict) is turned into a
Trajectory first, by the judge's `render_trajectory` (rbdspy/judge/trajectory_text.py).

    renderer = EvidenceRenderer(budget_tokens=1800)
    text = renderer(trajectory)
    rendering = renderer.render(trajectory)      # .text, .tokens, .cuts, .compressed
    Judge(renderer=renderer), Extractor(renderer=renderer), ContrastiveDistiller(renderer=renderer)
"""

from rbdspy.render.budget import (
    CHARS_PER_TOKEN,
    DEFAULT_BUDGET_TOKENS,
    DISTILLER_BUDGET_TOKENS,
    MIN_BUDGET_TOKENS,
    NOT_SHOWN_RULE,
    Cut,
    Rendering,
    estimate_tokens,
)
from rbdspy.render.evidence import EvidenceRenderer, as_renderer

__all__ = [
    "CHARS_PER_TOKEN",
    "DEFAULT_BUDGET_TOKENS",
    "DISTILLER_BUDGET_TOKENS",
    "MIN_BUDGET_TOKENS",
    "NOT_SHOWN_RULE",
    "Cut",
    "EvidenceRenderer",
    "Rendering",
    "as_renderer",
    "estimate_tokens",
]
