"""rbdspy: ReasoningBank as a DSPy program.

    import dspy, rbdspy
    dspy.configure(lm=rbdspy.make_lm("local"))
    store = rbdspy.MemoryStore("bank/", embedder=rbdspy.make_embedder("local"))
    bank = rbdspy.ReasoningBank(agent=my_agent, store=store, k=1)
    pred = bank(task="...")
"""

from rbdspy.lm import make_embedder, make_lm
from rbdspy.memory import HashEmbedder, MemoryStore, format_memory_block
from rbdspy.modules import ContrastiveDistiller, Extractor, Judge, MemoryRetriever, ReasoningBank
from rbdspy.types import Lesson, MemoryItem, Provenance, Step, Trajectory, Verdict

__version__ = "0.1.0"

__all__ = [
    "ContrastiveDistiller",
    "Extractor",
    "HashEmbedder",
    "Judge",
    "Lesson",
    "MemoryItem",
    "MemoryRetriever",
    "MemoryStore",
    "Provenance",
    "ReasoningBank",
    "Step",
    "Trajectory",
    "Verdict",
    "format_memory_block",
    "make_embedder",
    "make_lm",
]
