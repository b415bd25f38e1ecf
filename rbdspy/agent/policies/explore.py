"""Explore: after a few actions in one place where the map offers nothing, the environment's way
out to a place not visited this episode, without asking the LM.

Why: in ScienceWorld's house the bare 1.5B agent spent all 20 steps of every build episode in the
room it started in, picking up, moving and looking at what was there, and never opened a door.
From a place whose every way leads somewhere visited it leads back to the place left longest ago,
and on through such places at once (at most as many in a row as places visited), so a dead end
does not end the exploring. Only where the environment names its ways out (`WaysOut`).
"""

from __future__ import annotations

from dataclasses import dataclass

from rbdspy.agent.policies.base import Choice
from rbdspy.core.plan import Blocking, Plan
from rbdspy.envs.capabilities import WaysOut

# How many actions the agent may play in one place before a way out: a few to find and handle what
# is there, few enough that a 20-step episode still sees three or four rooms (a first choice,
# measured on ScienceWorld build tasks).
EXPLORE_AFTER = 4


@dataclass(frozen=True)
class Explore:
    """Takes the way out after `after` actions in one place where the map offers no step."""

    after: int = EXPLORE_AFTER

    def __post_init__(self):
        if self.after < 1:
            raise ValueError(f"after must be at least 1; got {self.after}")

    def propose(self, episode) -> Plan:
        waited = episode.steps_here >= self.after or episode.passing
        if not (waited and isinstance(episode.env, WaysOut)) or episode.offer() is not None:
            return None
        step = yield Blocking(episode.env.way_out, (list(episode.last_left),))
        if not step:
            return None
        action = episode.as_listed(step)
        if episode.answer_in(action):
            return None
        return Choice(action, "explore")
