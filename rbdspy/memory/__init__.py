"""rbdspy.memory: where lessons live between tasks.

`MemoryStore` (SQLite source of truth + FAISS indexes), the embedders that feed it, the
consolidation policies that decide how new items enter it, and the formatting that hands
retrieved items to the agent as fenced, sanitised data.
"""

from rbdspy.memory.base_database import InvalidItemError
from rbdspy.memory.consolidation import AppendPolicy, DedupPolicy, make_policy
from rbdspy.memory.embedders import Embedder, HashEmbedder, as_embedder
from rbdspy.memory.formatting import format_memory_block, sanitize_text
from rbdspy.memory.store import UNSCOPED, MemoryStore

__all__ = [
    "AppendPolicy",
    "DedupPolicy",
    "Embedder",
    "HashEmbedder",
    "InvalidItemError",
    "MemoryStore",
    "UNSCOPED",
    "as_embedder",
    "format_memory_block",
    "make_policy",
    "sanitize_text",
]
