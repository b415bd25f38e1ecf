"""Moved to `rbdspy.scaling.refiner`, where the code lives. This module re-exports it so that the old path
keeps working for imports and for pickles written before the move."""

from rbdspy.scaling.refiner import (  # noqa: F401
    ANSWER_MAX,
    NOTES_MAX,
    REFINEMENT_ROLE,
    TrajectoryRefiner,
    refined_trajectory,
    without_refinements,
)
