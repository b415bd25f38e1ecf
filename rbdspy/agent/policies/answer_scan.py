"""AnswerScan: with memory of the world, in each place until the episode has given an answer, the
answer listed there that the LM likes best, played once it is sure enough.

Why: on ScienceWorld's house the 1.5B agent, standing outside among animals, looked around and
moved the orange it held; asked about each thing in view ("Is blue jay a living thing?"), it put a
right answer first in 11 of 18 train tasks' answer places. Not without memory (nothing there
refutes a wrong pick: a threshold chosen on train tasks played the kitchen's potato as "a plant"
on dev ones), nor for a kind of task whose answer the map already confirmed, unless none such is
here (the map leads to where it was found). Answers past episodes lost on are never asked about.
Every answer asked about is in the record's answer checks.
"""

from __future__ import annotations

from dataclasses import dataclass

from rbdspy.agent.answer_check import SCAN_MOST, SCAN_THRESHOLD
from rbdspy.agent.policies.base import Choice
from rbdspy.core.plan import Plan


@dataclass(frozen=True)
class AnswerScan:
    """Plays the best listed answer here from `threshold` up, asking about at most `most`."""

    threshold: float = SCAN_THRESHOLD
    most: int = SCAN_MOST

    def propose(self, episode) -> Plan:
        place, guide = episode.place, episode.guide
        if episode.answered or place is None or place in episode.scanned or guide is None or not guide.map.episodes:
            return None
        offer = episode.offer()
        if offer is not None and offer.answers:
            return None  # the map gives an answer of its own; a place it only passes through is scanned
        if guide.map.answers_of(guide.kind) and guide.answer_here() is not None:
            return None
        episode.scanned.add(place)
        answers = [
            a
            for a in episode.listed()
            if (thing := episode.answer_in(a))
            and not episode.template(a)
            and not episode.repeats(a)
            and not episode.refuted(thing)
        ]
        best: tuple[float, str] | None = None
        for action in answers[: self.most]:
            asked = yield from episode.yes_to(action)
            if asked is None:
                return None  # an LM that cannot say picks nothing
            question, p = asked
            episode.checks.append({"action": action, "question": question, "p_yes": p, "scan": True})
            if p is not None and (best is None or p > best[0]):
                best = (p, action)
        if best is None or best[0] < self.threshold:
            return None
        return Choice(best[1], "scan")
