"""Moved to `rbdspy.loop.reasoning_bank`, where the code lives. This module re-exports it so that the old path
keeps working for imports and for pickles written before the move."""

from rbdspy.loop.reasoning_bank import (  # noqa: F401
    DEFAULT_MIN_SIMILARITY,
    DEFAULT_RANKING,
    QUERY_KINDS,
    RESULT_FIELDS,
    QueryKind,
    ReasoningBank,
    Recall,
)
from rbdspy.loop.reasoning_bank import trajectory_and_outcome as labelled  # noqa: F401  (its name before)
