"""Explore: after a few actions in one place where the map offers nothing, the environment's way
out to a place not visited this episode, without asking the LM.

Why: in ScienceWorld's house the bare 1.5B agent spent all 20 steps of every build episode in the
room it started in, picking up, moving and looking at what was there, and never opened a door.
From a place whose every way leads somewhere visited it leads back to the place left longest ago,
and on through such places at once (at most as many in a row as places visited), so a dead end
does not end the exploring. Only where the environment names its ways out (`WaysOut`).
"""

from __future__ import annotations

from rbdspy.agent.policies.base import Choice
from rbdspy.core.plan import Blocking, Plan

# How many actions the agent may play in one place before a way out: a few to find and handle what
# is there, few enough that a 20-step episode still sees three or four rooms (a first choice,
# measured on ScienceWorld build tasks).
EXPLORE_AFTER = 4


class Explore:
    """Takes the way out after `after` actions in one place where the map offers no step."""

    def __init__(self, after: int = EXPLORE_AFTER):
        if after < 1:
            raise ValueError(f"after must be at least 1; got {after}")
        self.after = after

    def propose(self, episode) -> Plan:
        way_out = getattr(episode.env, "way_out", None)
        waited = episode.steps_here >= self.after or episode.passing
        if not (waited and callable(way_out)) or episode.offer() is not None:
            return None
        step = yield Blocking(way_out, (list(episode.last_left),))
        if not step:
            return None
        action = episode.as_listed(step)
        if episode.answer_in(action):
            return None
        return Choice(action, "explore")

    def __repr__(self) -> str:
        return f"Explore(after={self.after})"
