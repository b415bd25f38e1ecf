"""Moved to `rbdspy.memory.store` (`LazyStore`, `reference`), beside the MemoryStore that pickles as
one and that one reopens. This module re-exports them so that pickles written before the move, which
name `rbdspy.memory.store_ref.LazyStore`, keep loading."""

from rbdspy.memory.store import LazyStore, reference  # noqa: F401
