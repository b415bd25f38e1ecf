"""Moved to `rbdspy.judge.probability`, where the code lives. This module re-exports it so that the old path
keeps working for imports and for pickles written before the move."""

from rbdspy.judge.probability import (  # noqa: F401
    DEFAULT_PROBABILITY_VIEWS,
    LABELS,
    PROBABILITY_VIEWS,
    STEP_VIEWS,
    TOP_LOGPROBS,
    answered_by_question,
    before_last,
    label_probability,
    lm_calls,
    log_odds,
    probability_plan,
    question_demos,
    questions,
    score_log_odds,
)
