"""The optimizable prompts of rbdspy. Each docstring is the instruction an optimizer rewrites.

- judge.py: the judge designs' questions; extract.py, contrast.py: the extractors' and the
  distiller's; select.py, refine.py: test-time scaling's.
- act.py: the environment agent's next action (`NextAction`, rbdspy/agent/); confirm.py: its check
  before an action that commits the task's answer (`AskedFor`, `YesOrNo`).
- workflow.py: the AWM baseline's workflow induction (`InduceWorkflow`, rbdspy/bench/baselines.py).
- rubric.py: the optional LM rubric of the extractor metric (`GradeLessons`, rbdspy/optimizers/).
"""

from rbdspy.signatures.act import NextAction
from rbdspy.signatures.confirm import AskedFor, YesOrNo
from rbdspy.signatures.contrast import ContrastTrajectories
from rbdspy.signatures.extract import ExtractFailureLessons, ExtractSuccessLessons
from rbdspy.signatures.judge import (
    JudgeActions,
    JudgeChecklist,
    JudgeLastSteps,
    JudgeTrajectory,
    JudgeVerdict,
    JudgeWithConfidence,
    RequirementCheck,
)
from rbdspy.signatures.refine import RefineTrajectory
from rbdspy.signatures.rubric import GradeLessons
from rbdspy.signatures.select import SelectBestTrajectory
from rbdspy.signatures.workflow import InduceWorkflow

__all__ = [
    "AskedFor",
    "ContrastTrajectories",
    "ExtractFailureLessons",
    "ExtractSuccessLessons",
    "GradeLessons",
    "InduceWorkflow",
    "JudgeActions",
    "JudgeChecklist",
    "JudgeLastSteps",
    "JudgeTrajectory",
    "JudgeVerdict",
    "JudgeWithConfidence",
    "NextAction",
    "RefineTrajectory",
    "RequirementCheck",
    "SelectBestTrajectory",
    "YesOrNo",
]
