"""RepeatGuard: no action played again from the state it was already played from.

Why: on a persistent TextWorld world the bare 1.5B agent spent most of its steps moving back and
forth between two rooms or taking and dropping the same object. The state is (place, what the
agent carries) where the environment says so, else the observation text. A repeated action changed
nothing the first time it mattered: struck, the LM is asked again among the listed actions left.
"""

from __future__ import annotations

from dataclasses import dataclass

from rbdspy.agent.policies.base import Choice
from rbdspy.core.plan import Plan


def repeat_note(action: str) -> str:
    return (
        f"(You already did '{action}' from this same place carrying the same things, and it did not get "
        "the task done. Choose a different action.)"
    )


@dataclass(frozen=True)
class RepeatGuard:
    """Strikes an action already played from the same state."""

    def review(self, episode, choice: Choice) -> Plan:
        return repeat_note(choice.action) if episode.repeats(choice.action) else None
        yield  # pragma: no cover - a plan that asks nothing
