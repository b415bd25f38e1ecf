"""Moved to `rbdspy.lessons.action_record`, where the code lives. This module re-exports it so that the old path
keeps working for imports and for pickles written before the move."""

from rbdspy.lessons.action_record import (  # noqa: F401
    ROUTE_MEMORIES,
    accepted_actions,
    action_record,
)
