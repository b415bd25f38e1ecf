"""Moved to `rbdspy.scaling.selector`, where the code lives. This module re-exports it so that the old path
keeps working for imports and for pickles written before the move."""

from rbdspy.scaling.selector import (  # noqa: F401
    TrajectorySelector,
    rule_choice,
)
