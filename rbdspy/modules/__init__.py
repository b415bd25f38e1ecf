"""The DSPy modules of rbdspy: each has forward and aforward, and every LM call is a predictor
an optimizer can see."""

from rbdspy.modules.distiller import ContrastiveDistiller
from rbdspy.modules.extractor import Extractor
from rbdspy.modules.judge import Judge
from rbdspy.modules.learner import Learner
from rbdspy.modules.lm_errors import LMSetupError
from rbdspy.modules.matts import MaTTS, VanillaTTS
from rbdspy.modules.reasoning_bank import ReasoningBank
from rbdspy.modules.refiner import TrajectoryRefiner
from rbdspy.modules.retriever import MemoryRetriever
from rbdspy.modules.rollout import Rollout
from rbdspy.modules.selector import TrajectorySelector

__all__ = [
    "ContrastiveDistiller",
    "Extractor",
    "Judge",
    "Learner",
    "LMSetupError",
    "MaTTS",
    "MemoryRetriever",
    "ReasoningBank",
    "Rollout",
    "TrajectoryRefiner",
    "TrajectorySelector",
    "VanillaTTS",
]
