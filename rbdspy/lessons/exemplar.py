"""A past episode as a compact exemplar a reader (or an embedder) takes in at a glance: each action
with the start of what it led to; and the writer of a success-only memory whose item is that
exemplar (Synapse's exemplar memory, and the demonstrations of `rbdspy.loop.demo_memory`)."""

from __future__ import annotations

from rbdspy.core.plan import Plan
from rbdspy.core.roles import AGENT_ROLE, ENV_ROLE
from rbdspy.core.text import clip
from rbdspy.lessons.success_writer import SuccessItemWriter
from rbdspy.types import CONTENT_MAX, DESCRIPTION_MAX, Trajectory

EXEMPLAR_OBSERVATION_CHARS = 100  # per step, so that a whole short episode fits in one item


def render_exemplar(trajectory: Trajectory, max_chars: int = CONTENT_MAX) -> str:
    """A trajectory as a compact exemplar: each action with the start of what it led to. The
    end of an episode (where it was won) is kept when the whole does not fit."""
    lines, last_action = [], None
    for i, step in enumerate(trajectory.steps):
        if step.role == AGENT_ROLE:
            last_action = trajectory.action_text(i).strip()  # with what it named, where its text does not say
        elif step.role == ENV_ROLE and last_action is not None:
            lines.append(f"> {last_action} -> {clip(step.content, EXEMPLAR_OBSERVATION_CHARS)}")
            last_action = None
    if last_action is not None:
        lines.append(f"> {last_action}")
    if not lines:  # not an environment trajectory: the generic rendering
        return clip(trajectory.render(max_chars), max_chars)
    text = " | ".join(lines)
    return text if len(text) <= max_chars else "…" + text[-(max_chars - 1) :]


class ExemplarWriter(SuccessItemWriter):
    """Synapse-style: the raw successful trajectory, capped, is the item."""

    def _drafts(self, trajectory: Trajectory) -> Plan:
        yield from ()
        return [
            {
                "title": clip(f"Solved example: {trajectory.task}", 100),
                "description": clip(f"A past task solved this way: {trajectory.task}", DESCRIPTION_MAX),
                "content": render_exemplar(trajectory),
            }
        ]
