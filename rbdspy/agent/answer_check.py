"""The agent's answer check (the `confirm` aid): before an action that gives the task's answer
(`Environment.answer_in`), the LM says what the task asks for (`AskedFor`, once per episode) and
then answers "Is <thing> <what is asked for>?" (`YesOrNo`). The answer is kept when P(yes), read
from the logprobs of the word the LM writes, reaches `ANSWER_THRESHOLD`; an LM that gives no
logprobs is taken at its word.

Why a probability: the embedded 1.5B model writes "no" to most such questions, right answer or
wrong, while its P(yes) still ranks right answers above wrong ones. The threshold was chosen on
ScienceWorld train tasks only (`python -m benchmarks.answer_check`, docs/results/memory.md): the
highest that keeps at least 9 in 10 right answers there.
"""

from __future__ import annotations

from typing import Any

from rbdspy.core.logprobs import label_probability
from rbdspy.signatures.confirm import ANSWER_QUESTION

ANSWER_THRESHOLD = 0.29
LABELS = ("yes", "no")


def asked_for_text(raw: Any) -> str:
    """`AskedFor`'s answer as one phrase: its first line, without quotes or a final period."""
    text = str(raw or "").strip()
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line.strip("`'\" ").rstrip(".?!").strip()


def answer_question(thing: str, asked_for: str) -> str:
    return ANSWER_QUESTION.format(thing=thing.strip(), asked_for=asked_for)


def yes_probability(pred: Any) -> float | None:
    """P(yes) from the logprobs on `pred`, else 1 or 0 for a written "yes" or "no"; None when the
    answer is neither."""
    p = label_probability(getattr(pred, "logprobs", None), LABELS)
    if p is not None:
        return p
    word = str(getattr(pred, "answer", "") or "").strip().strip(".").lower()
    return {"yes": 1.0, "no": 0.0}.get(word)
