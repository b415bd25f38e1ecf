"""rbdspy.render: every way rbdspy writes a trajectory as prompt text.

- by_characters.py: `render_by_characters`, what `Trajectory.render(max_chars)` writes: one
  `[i] role: text` line per step, verbatim repeats pointed back to, the middle of a long
  trajectory cut by characters.
- evidence.py: `EvidenceRenderer`, a trajectory within a token budget, compressed before it is
  cut, every cut named (`Trajectory.render(budget_tokens=...)`, and by default what the judge, the
  extractors and the distiller read); `as_renderer`, what a module's `renderer=` accepts.
- layout.py: the evidence renderer's parts of a trajectory and their assembly under limits.
- budget.py: token counting, the budgets, `NOT_SHOWN_RULE`, and what a rendering reports.

A trajectory of another shape (a message list, dspy.ReAct's dict) is turned into a Trajectory
first, by the judge's `render_trajectory` (rbdspy/judge/trajectory_text.py). This package reads
trajectories by their shape only: `rbdspy.types` (whose `Trajectory.render` calls it) sits above it.

    renderer = EvidenceRenderer(budget_tokens=1800)
    text = renderer(trajectory)                  # or Trajectory.render(budget_tokens=1800)
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
from rbdspy.render.by_characters import render_by_characters
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
    "render_by_characters",
]
