"""The DSPy modules of rbdspy: each has forward and aforward, and every LM call is a predictor
an optimizer can see."""

from rbdspy.judge.judge import Judge
from rbdspy.lessons.distiller import ContrastiveDistiller
from rbdspy.lessons.extractor import Extractor
from rbdspy.loop.learner import Learner
from rbdspy.loop.lm_errors import LMSetupError
from rbdspy.loop.reasoning_bank import ReasoningBank
from rbdspy.loop.retriever import MemoryRetriever
from rbdspy.modules.matts import MaTTS, VanillaTTS
from rbdspy.modules.refiner import TrajectoryRefiner
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
