"""Moved to `rbdspy.scaling.rollout`, where the code lives. This module re-exports it so that the old path
keeps working for imports and for pickles written before the move."""

from rbdspy.scaling.rollout import (  # noqa: F401
    DEFAULT_TEMPERATURE,
    Rollout,
    rollout_plan,
    sampled_lm,
    step_count,
)
