"""ListedOnly: where the environment lists every action it understands now, the LM's action must be
one of them.

Why: on a TextWorld house with a varying start room the bare 1.5B agent's actions were refused 30
times in 223 (13%), "put pear on chair" where no chair was. A list that holds templates (ScienceWorld's)
names only part of what the world takes, so there nothing is outside it. Only the LM's choices are
reviewed: the other policies choose among listed actions already.
"""

from __future__ import annotations

from dataclasses import dataclass

from rbdspy.agent.policies.base import Choice
from rbdspy.core.plan import Plan


def unlisted_note(action: str) -> str:
    return f"(The environment does not understand '{action}' here. Choose one of the listed actions.)"


@dataclass(frozen=True)
class ListedOnly:
    """Strikes an LM action outside a list of every action the environment understands."""

    def review(self, episode, choice: Choice) -> Plan:
        return unlisted_note(choice.action) if choice.source == "lm" and episode.unlisted(choice.action) else None
        yield  # pragma: no cover - a plan that asks nothing
