"""Moved to `rbdspy.loop.agent_io`, where the code lives. This module re-exports it so that the old path
keeps working for imports and for pickles written before the move."""

from rbdspy.loop.agent_io import (  # noqa: F401
    accepts_input,
    output_fields,
    task_text,
    trajectory_of,
)
