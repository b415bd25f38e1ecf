"""rbdspy: ReasoningBank as a DSPy program.

import dspy, rbdspy
dspy.configure(lm=rbdspy.make_lm("local"))
store = rbdspy.MemoryStore("bank/", embedder=rbdspy.make_embedder("local"))
bank = rbdspy.ReasoningBank(agent=my_agent, store=store, k=1)
pred = bank(task="...")
pred = rbdspy.MaTTS(bank, k=3, mode="parallel")(task="...")   # or mode="sequential"
"""

import os

# Offline is rbdspy's default posture: LiteLLM must not fetch its model price list when it is
# imported (offline that fails, and under `mlflow server`, which imports LiteLLM while holding an
# import lock, it deadlocks: `rbdspy ui` never listens). Set the variable to "False" to fetch it.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from rbdspy.judge.calibration import Calibration, CalibrationWarning  # noqa: E402
from rbdspy.lm import make_embedder, make_lm  # noqa: E402
from rbdspy.memory import HashEmbedder, MemoryStore, format_memory_block
from rbdspy.modules import (
    ContrastiveDistiller,
    Extractor,
    Judge,
    Learner,
    LMSetupError,
    MaTTS,
    MemoryRetriever,
    ReasoningBank,
    Rollout,
    TrajectoryRefiner,
    TrajectorySelector,
    VanillaTTS,
)
from rbdspy.render import EvidenceRenderer
from rbdspy.tracking import log_bank  # MLflow itself is imported only when a program is logged
from rbdspy.types import Lesson, MemoryItem, Provenance, Step, Trajectory, Verdict

__version__ = "0.1.0"

__all__ = [
    "Calibration",
    "CalibrationWarning",
    "ContrastiveDistiller",
    "EvidenceRenderer",
    "Extractor",
    "HashEmbedder",
    "Judge",
    "Learner",
    "LMSetupError",
    "Lesson",
    "MaTTS",
    "MemoryItem",
    "MemoryRetriever",
    "MemoryStore",
    "Provenance",
    "ReasoningBank",
    "Rollout",
    "Step",
    "Trajectory",
    "TrajectoryRefiner",
    "TrajectorySelector",
    "Verdict",
    "VanillaTTS",
    "format_memory_block",
    "make_embedder",
    "log_bank",
    "make_lm",
]
