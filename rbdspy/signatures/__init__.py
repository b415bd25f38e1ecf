"""The optimizable prompts of rbdspy. Each docstring is the instruction an optimizer rewrites."""

from rbdspy.signatures.contrast import ContrastTrajectories
from rbdspy.signatures.extract import ExtractFailureLessons, ExtractSuccessLessons
from rbdspy.signatures.judge import (
    JudgeChecklist,
    JudgeFinalGoal,
    JudgeLastSteps,
    JudgeTrajectory,
    JudgeVerdict,
    JudgeWithConfidence,
    RequirementCheck,
    VerifyGoalReached,
)
from rbdspy.signatures.refine import RefineTrajectory
from rbdspy.signatures.select import SelectBestTrajectory

__all__ = [
    "ContrastTrajectories",
    "ExtractFailureLessons",
    "ExtractSuccessLessons",
    "JudgeChecklist",
    "JudgeFinalGoal",
    "JudgeLastSteps",
    "JudgeTrajectory",
    "JudgeVerdict",
    "JudgeWithConfidence",
    "RefineTrajectory",
    "RequirementCheck",
    "SelectBestTrajectory",
    "VerifyGoalReached",
]
