"""The optimizable prompts of rbdspy. Each docstring is the instruction an optimizer rewrites."""

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
from rbdspy.signatures.select import SelectBestTrajectory

__all__ = [
    "ContrastTrajectories",
    "ExtractFailureLessons",
    "ExtractSuccessLessons",
    "JudgeActions",
    "JudgeChecklist",
    "JudgeLastSteps",
    "JudgeTrajectory",
    "JudgeVerdict",
    "JudgeWithConfidence",
    "RefineTrajectory",
    "RequirementCheck",
    "SelectBestTrajectory",
]
