"""Moved to `rbdspy.judge.judge`, where the code lives. This module re-exports it so that the old path
keeps working for imports and for pickles written before the move."""

from rbdspy.judge.judge import (  # noqa: F401
    DEFAULT_CONFIDENCE_THRESHOLD,
    DEFAULT_JUDGE_DESIGN,
    DEFAULT_PROBABILITY_BAND,
    DEFAULT_SAMPLE_TEMPERATURE,
    DEFAULT_SAMPLES,
    JUDGE_DESIGNS,
    PROBABILITY_PREDICTORS,
    Judge,
    majority_verdict,
)
from rbdspy.judge.trajectory_text import render_trajectory  # noqa: F401
from rbdspy.loop.lm_errors import indeterminate  # noqa: F401
