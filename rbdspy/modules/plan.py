"""Moved to `rbdspy.loop.plan`, where the code lives. This module re-exports it so that the old path
keeps working for imports and for pickles written before the move."""

from rbdspy.loop.plan import (  # noqa: F401
    Blocking,
    Call,
    Gather,
    Plan,
    arun,
    run,
)
