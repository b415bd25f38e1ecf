"""Moved to `rbdspy.loop.learner`, where the code lives. This module re-exports it so that the old path
keeps working for imports and for pickles written before the move."""

from rbdspy.loop.learner import (  # noqa: F401
    Learner,
    provenance_of,
)
