"""A trajectory given in any accepted shape, as the prompt text the judge reads.

The extractor, the distiller, the refiner and the compile examples show a trajectory through the
same function, so each reads it as the judge does. How the text is written is rbdspy.render's
job (`Trajectory.render` by characters, or a renderer such as `EvidenceRenderer` by tokens); this
module only turns the accepted shapes into a Trajectory and picks the renderer.
"""

from __future__ import annotations

from typing import Any

from rbdspy.types import Trajectory


def render_trajectory(trajectory: Any, task: str, max_chars: int, renderer=None) -> str:
    """Prompt text for a trajectory given in any accepted shape, or already rendered (str).
    `renderer` (a Trajectory -> str, e.g. an EvidenceRenderer) replaces `Trajectory.render`."""
    if isinstance(trajectory, str):
        return trajectory
    trajectory = Trajectory.coerce(trajectory, task=task)
    return trajectory.render(max_chars) if renderer is None else renderer(trajectory)
