"""A trajectory given in any accepted shape, as the prompt text the judge reads.

The extractor, the distiller, the refiner and the compile examples show a trajectory through the
same function, so each reads it as the judge does. How the text is written is rbdspy.render's
job (`Trajectory.render` by characters, or a renderer such as `EvidenceRenderer` by tokens); this
module only turns the accepted shapes into a Trajectory and picks the renderer.
"""

from __future__ import annotations

from typing import Any

from rbdspy.types import Trajectory

# Set in a labelled record's trajectory metadata when its final answer is the agent's own words
# (how it stopped), which the judge reads in the loop; any other final answer in a dataset may
# carry the environment's score, and is hidden.
AGENT_FINAL_ANSWER = "final_answer_by_agent"


def as_judged(trajectory: Trajectory) -> Trajectory:
    """A labelled trajectory as the bank's judge would read it: its final answer kept when the
    agent wrote it (metadata AGENT_FINAL_ANSWER), hidden otherwise (dataset files have put the
    environment's score there), so the judge is never shown the label."""
    if trajectory.metadata.get(AGENT_FINAL_ANSWER):
        return trajectory
    return trajectory.model_copy(update={"final_answer": None})


def render_trajectory(trajectory: Any, task: str, max_chars: int, renderer=None) -> str:
    """Prompt text for a trajectory given in any accepted shape, or already rendered (str).
    `renderer` (a Trajectory -> str, e.g. an EvidenceRenderer) replaces `Trajectory.render`."""
    if isinstance(trajectory, str):
        return trajectory
    trajectory = Trajectory.coerce(trajectory, task=task)
    return trajectory.render(max_chars) if renderer is None else renderer(trajectory)
