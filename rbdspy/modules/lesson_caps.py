"""Moved to `rbdspy.lessons.caps`, where the code lives. This module re-exports it so that the old path
keeps working for imports and for pickles written before the move."""

from rbdspy.lessons.caps import (  # noqa: F401
    MAX_LESSONS_PER_CONTRAST,
    MAX_LESSONS_PER_TRAJECTORY,
    check_max_lessons,
    normalise_lessons,
)
