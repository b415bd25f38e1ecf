"""Moved to `rbdspy.judge.last_steps`, where the code lives. This module re-exports it so that the old path
keeps working for imports and for pickles written before the move."""

from rbdspy.judge.last_steps import (  # noqa: F401
    INPUT_ROLES,
    LAST_ACTIONS,
    LAST_OBSERVATION_CHARS,
    LISTED_HEAD,
    MAX_LISTED_ACTIONS,
    RECENT_ACTIONS,
    action_indices,
    action_list,
    is_action,
    last_steps,
    last_window,
    tail_of_text,
)
