"""The answer check's reading of the LM: P(yes) from logprobs, else the written word."""

from __future__ import annotations

import math

import dspy
import pytest

from rbdspy.agent.answer_check import ANSWER_THRESHOLD, answer_question, asked_for_text, yes_probability


def _entry(token: str, p: float, alternatives: list[tuple[str, float]]) -> dict:
    return {
        "token": token,
        "logprob": math.log(p),
        "top_logprobs": [{"token": t, "logprob": math.log(q)} for t, q in alternatives],
    }


def test_p_yes_is_read_from_the_answer_token_not_the_word_written():
    tokens = [_entry('{"', 1.0, []), _entry("no", 0.6, [("no", 0.6), ("yes", 0.3), ("No", 0.05)])]
    pred = dspy.Prediction(answer="no", logprobs={"content": tokens})
    assert yes_probability(pred) == pytest.approx(0.3 / 0.95)
    assert yes_probability(pred) >= ANSWER_THRESHOLD  # a "no" written at P(yes) 0.32 keeps the answer
    low = [_entry("no", 0.9, [("no", 0.9), ("yes", 0.05)])]
    assert yes_probability(dspy.Prediction(answer="no", logprobs={"content": low})) < ANSWER_THRESHOLD


def test_without_logprobs_the_written_word_decides():
    assert yes_probability(dspy.Prediction(answer="Yes.")) == 1.0
    assert yes_probability(dspy.Prediction(answer="no")) == 0.0
    assert yes_probability(dspy.Prediction(answer="maybe")) is None


def test_the_question_names_the_thing_and_what_is_asked_for():
    assert asked_for_text('"An animal."\nBecause the task says so') == "An animal"
    assert asked_for_text(None) == ""
    assert answer_question(" butterfly ", "an animal") == "Is butterfly an animal?"
