"""Moved to `rbdspy.loop.retriever`, where the code lives. This module re-exports it so that the old path
keeps working for imports and for pickles written before the move."""

from rbdspy.loop.retriever import (  # noqa: F401
    AUTO,
    CANDIDATE_POOL,
    DEFAULT_K,
    MEASURED_FLOORS,
    RANKINGS,
    SITUATION_WEIGHT,
    MemoryRetriever,
    Ranking,
)
