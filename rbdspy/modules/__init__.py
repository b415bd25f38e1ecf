"""The DSPy modules of rbdspy: each has forward and aforward, and every LM call is a predictor
an optimizer can see."""

from rbdspy.modules.distiller import ContrastiveDistiller
from rbdspy.modules.extractor import Extractor
from rbdspy.modules.judge import Judge
from rbdspy.modules.reasoning_bank import ReasoningBank
from rbdspy.modules.retriever import MemoryRetriever

__all__ = ["ContrastiveDistiller", "Extractor", "Judge", "MemoryRetriever", "ReasoningBank"]
