"""AnswerCheck: before an action that gives the task's answer, whether its thing is what the task
asks for.

Why: a wrong answer ends the episode (ScienceWorld's "focus on X"); on ScienceWorld's house the
1.5B agent committed within its first three steps to whatever was in view (the sink, a box, the
orange it held) in most episodes. The LM says once what the task asks for, then P(yes) of "Is
<thing> <that>?" (`rbdspy.agent.answer_check`) keeps the answer from `ANSWER_THRESHOLD` up. An
answer the world's map says the environment confirmed for this kind of task is kept unasked, one
it refuted (every episode that gave it lost) declined unasked: the world's score outranks a small
LM's yes or no. An LM that cannot answer leaves the action as chosen. A declined answer is struck
for the rest of the episode.
"""

from __future__ import annotations

from dataclasses import dataclass

from rbdspy.agent.answer_check import ANSWER_THRESHOLD
from rbdspy.agent.policies.base import Choice
from rbdspy.core.plan import Plan


def declined_note(action: str) -> str:
    return (
        f"(You were about to answer with '{action}', but that is not what the task asks for. "
        "Choose a different action: look for the right thing first.)"
    )


@dataclass(frozen=True)
class AnswerCheck:
    """Reviews answers (see the module docstring); `threshold`: the P(yes) an answer must reach."""

    threshold: float = ANSWER_THRESHOLD

    def review(self, episode, choice: Choice) -> Plan:
        thing = episode.answer_in(choice.action)
        if thing is None or choice.source == "scan":  # the scan asked already, and liked it best
            return None
        if episode.vouched(thing):
            episode.checks.append({"action": choice.action, "vouched": True, "kept": True})
            return None
        if episode.refuted(thing):
            episode.checks.append({"action": choice.action, "refuted": True, "kept": False})
            episode.decline(choice.action)
            return declined_note(choice.action)
        asked = yield from episode.yes_to(choice.action)
        if asked is None:
            return None
        question, p = asked
        kept = p is None or p >= self.threshold
        episode.checks.append({"action": choice.action, "question": question, "p_yes": p, "kept": kept})
        if kept:
            return None
        episode.decline(choice.action)
        return declined_note(choice.action)
