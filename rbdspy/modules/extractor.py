"""Moved to `rbdspy.lessons.extractor`, where the code lives. This module re-exports it so that the old path
keeps working for imports and for pickles written before the move."""

from rbdspy.lessons.extractor import (  # noqa: F401
    Extractor,
)
