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
# The `scan` aid plays the answer it likes best among those in view only from this P(yes) up: on
# ScienceWorld train tasks (`python -m benchmarks.answer_scan --per-type 3`), midway between the
# highest P(yes) of a wrong best answer (0.528: the orange as "a plant") and the right one just
# above it (0.553), so no wrong pick there was played and 11 of the 15 right ones were.
SCAN_THRESHOLD = 0.54
# At most this many answers are asked about in one place (a room lists 2 to 16 in ScienceWorld).
SCAN_MOST = 20
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
