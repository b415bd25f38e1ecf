"""rbdspy: ReasoningBank as a DSPy program.

import dspy, rbdspy
dspy.configure(lm=rbdspy.make_lm("local"))
store = rbdspy.MemoryStore("bank/", embedder=rbdspy.make_embedder("local"))
bank = rbdspy.ReasoningBank(agent=my_agent, store=store)   # or rbdspy.paper_bank(my_agent, store), ...
pred = bank(task="...")
pred = rbdspy.MaTTS(bank, k=3, mode="parallel")(task="...")   # or mode="sequential"
"""

import os

# Offline is rbdspy's default posture: LiteLLM must not fetch its model price list when it is
# imported (offline that fails, and under `mlflow server`, which imports LiteLLM while holding an
# import lock, it deadlocks: `rbdspy ui` never listens). Set the variable to "False" to fetch it.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from rbdspy.agent import EnvAgent
from rbdspy.core.lm_errors import LMSetupError
from rbdspy.judge import (
    BaseJudge,
    ChecklistJudge,
    ConfidenceJudge,
    Judge,
    ProbabilityJudge,
    RationaleJudge,
    SelfConsistencyJudge,
    judge_for,
)
from rbdspy.judge.calibration import Calibration, CalibrationWarning
from rbdspy.lessons.distiller import ContrastiveDistiller
from rbdspy.lessons.extractor import Extractor
from rbdspy.lm import make_embedder, make_lm
from rbdspy.loop.demo_memory import DemoMemory
from rbdspy.loop.learner import Learner
from rbdspy.loop.presets import actions_bank, default_bank, own_agent_bank, paper_bank, world_bank
from rbdspy.loop.reasoning_bank import ReasoningBank
from rbdspy.loop.retriever import MemoryRetriever
from rbdspy.memory import HashEmbedder, MemoryStore, format_memory_block
from rbdspy.render import EvidenceRenderer
from rbdspy.scaling.matts import MaTTS, VanillaTTS
from rbdspy.scaling.refiner import TrajectoryRefiner
from rbdspy.scaling.rollout import Rollout
from rbdspy.scaling.selector import TrajectorySelector
from rbdspy.tracking import log_bank  # MLflow itself is imported only when a program is logged
from rbdspy.types import Demo, Lesson, MemoryItem, Provenance, Step, Trajectory, Verdict

__version__ = "0.1.0"

__all__ = [
    "BaseJudge",
    "ChecklistJudge",
    "ConfidenceJudge",
    "ProbabilityJudge",
    "RationaleJudge",
    "SelfConsistencyJudge",
    "judge_for",
    "Calibration",
    "CalibrationWarning",
    "ContrastiveDistiller",
    "DemoMemory",
    "Demo",
    "EnvAgent",
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
    "paper_bank",
    "default_bank",
    "own_agent_bank",
    "actions_bank",
    "world_bank",
    "log_bank",
    "make_lm",
]
