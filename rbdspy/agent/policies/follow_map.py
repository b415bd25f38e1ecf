"""FollowMap: the step the world's map offers, played without asking the LM.

Why: on ScienceWorld's house the 1.5B agent, offered the map's step first in its list and named
above the observation, chose it about as often as any other action, right or wrong (asked whether
to take the offered step it said P(yes) = 0.24 to every offer); on the TextWorld house, where it
followed the map's moves, it won 39 of 40 quests against 12. The map offers a step only where every
past episode of the kind that offers one agrees, and only as an action listed now
(`rbdspy.maps.guide`), so following it costs steps at worst; an answer it offers still goes
through the answer check (`AnswerCheck`), which keeps unasked one the environment confirmed.
"""

from __future__ import annotations

from dataclasses import dataclass

from rbdspy.agent.policies.base import Choice
from rbdspy.core.plan import Plan


@dataclass(frozen=True)
class FollowMap:
    """Plays the map's offer. `ways_only`: only its moves and what opens a way (every other step
    is the LM's to choose, the offer shown first in its list); else every offer, answers too.
    Nothing where the task's own action is listed: that is the task done, the LM's to play."""

    ways_only: bool = False

    def propose(self, episode) -> Plan:
        offer = episode.offer()
        if offer is None or episode.task_action() is not None:
            return None
        if self.ways_only and not offer.on_the_way:
            return None
        return Choice(offer.text, "map", offer.why.to_dict())
        yield  # pragma: no cover - a plan that asks nothing
