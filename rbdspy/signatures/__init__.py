"""The optimizable prompts of rbdspy. Each docstring is the instruction an optimizer rewrites."""

from rbdspy.signatures.contrast import ContrastTrajectories
from rbdspy.signatures.extract import ExtractFailureLessons, ExtractSuccessLessons
from rbdspy.signatures.judge import JudgeChecklist, JudgeTrajectory, JudgeWithConfidence, RequirementCheck
from rbdspy.signatures.refine import RefineTrajectory
from rbdspy.signatures.select import SelectBestTrajectory

__all__ = [
    "ContrastTrajectories",
    "ExtractFailureLessons",
    "ExtractSuccessLessons",
    "JudgeChecklist",
    "JudgeTrajectory",
    "JudgeWithConfidence",
    "RefineTrajectory",
    "RequirementCheck",
    "SelectBestTrajectory",
]
