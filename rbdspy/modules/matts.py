"""Moved to `rbdspy.scaling.matts`, where the code lives. This module re-exports it so that the old path
keeps working for imports and for pickles written before the move."""

from rbdspy.scaling.matts import (  # noqa: F401
    CALLER_ERRORS,
    EXECUTORS,
    MATTS_FIELDS,
    MODES,
    MaTTS,
    VanillaTTS,
)
