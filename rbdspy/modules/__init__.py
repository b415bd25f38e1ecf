"""The DSPy modules of rbdspy, gathered from the folders of the stages they belong to: each has
forward and aforward, and every LM call is a predictor an optimizer can see.

The code lives in rbdspy/judge/, rbdspy/lessons/, rbdspy/scaling/ and rbdspy/loop/ (see
docs/concepts/architecture.md); the submodules of this package (`rbdspy.modules.judge`, ...) are
the paths the modules had before, kept as re-exports for imports and pickled programs.
"""

from rbdspy.judge.judge import Judge
from rbdspy.lessons.distiller import ContrastiveDistiller
from rbdspy.lessons.extractor import Extractor
from rbdspy.loop.learner import Learner
from rbdspy.loop.lm_errors import LMSetupError
from rbdspy.loop.reasoning_bank import ReasoningBank
from rbdspy.loop.retriever import MemoryRetriever
from rbdspy.scaling.matts import MaTTS, VanillaTTS
from rbdspy.scaling.refiner import TrajectoryRefiner
from rbdspy.scaling.rollout import Rollout
from rbdspy.scaling.selector import TrajectorySelector

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
