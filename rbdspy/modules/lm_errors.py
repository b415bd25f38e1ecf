"""Moved to `rbdspy.loop.lm_errors`, where the code lives. This module re-exports it so that the old path
keeps working for imports and for pickles written before the move."""

from rbdspy.loop.lm_errors import (  # noqa: F401
    SETUP_HINT,
    LMSetupError,
    act,
    attempt,
    configured_lm,
    indeterminate,
    raise_if_setup_error,
    setup_problem,
)
