"""Moved to `rbdspy.scaling.ray_rollouts`, where the code lives. This module re-exports it so that the old path
keeps working for imports and for pickles written before the move."""

from rbdspy.scaling.ray_rollouts import (  # noqa: F401
    check_agent,
    remote_rollouts,
)
