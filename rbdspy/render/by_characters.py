"""A trajectory as prompt text cut by characters: what `Trajectory.render(max_chars)` writes.

Each step is one `[i] role: text` line, then the final answer. An observation repeated verbatim is
shown once (later copies point back to it). A long trajectory keeps its start and its end (where
the outcome shows) and the middle is elided, so a call stays within a small model's context.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rbdspy.roles import OBSERVATION_ROLES

if TYPE_CHECKING:
    from rbdspy.types import Trajectory

# An observation repeated verbatim and longer than this is shown as a pointer to its first copy.
POINTER_MIN_CHARS = 80


def render_by_characters(trajectory: Trajectory, max_chars: int = 6000) -> str:
    """`trajectory` as `[i] role: text` lines within `max_chars` characters: the first third and
    the last two thirds kept, the middle replaced by a line saying how many characters went."""
    lines, seen = [], {}
    for i, step in enumerate(trajectory.steps):
        content = step.content.strip()
        # An observation repeated verbatim (a room described again) is shown once; a small
        # model reads the evidence, not the same paragraph twice.
        if step.role in OBSERVATION_ROLES and len(content) > POINTER_MIN_CHARS and content in seen:
            lines.append(f"[{i}] {step.role}: (same as [{seen[content]}])")
            continue
        if step.role in OBSERVATION_ROLES:
            seen.setdefault(content, i)
        lines.append(f"[{i}] {step.role}: {content}")
    if trajectory.final_answer:
        lines.append(f"[final answer] {trajectory.final_answer.strip()}")
    text = "\n".join(lines) if lines else "(no steps recorded)"
    if len(text) <= max_chars:
        return text
    head = max_chars // 3
    tail = max_chars - head
    omitted = len(text) - head - tail
    return f"{text[:head]}\n... [{omitted} characters of the middle omitted] ...\n{text[-tail:]}"
