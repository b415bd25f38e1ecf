"""What a step policy is: a part of the agent that proposes the next action, or reviews one.

`EnvAgent` is built from step policies passed in, in order, as `dspy.ReAct` is built from its
tools. Each step, the proposers are asked in turn (`propose`); the first `Choice` that every
reviewer keeps (`review`) is played. A reviewer that strikes a proposer's choice passes the step on
to the next proposer; one that strikes the LM's choice has the LM asked again, with the reason
(`LMChoice`). A policy may do both (the answer check proposes nothing and reviews answers).

Both are plans (`rbdspy.core.plan`): a policy that asks an LM yields the call, so one body runs
sync and async.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from rbdspy.core.plan import Plan

# What a policy is asked with: the `rbdspy.agent.episode.Episode` being played (not imported here:
# the episode imports `Choice`, and the package has no import cycles).
Episode = Any


@dataclass(frozen=True)
class Choice:
    """An action to play and where it came from: `source` names the policy ("map", "explore",
    "scan", "lm"), `why` says why as data for the record (the map's `Why`, as a dict), and
    `prediction` is the LM's, where it chose."""

    action: str
    source: str
    why: dict[str, Any] | None = None
    prediction: Any = None


@runtime_checkable
class Proposes(Protocol):
    """A policy that proposes the next action, or None to leave the step to the next policy."""

    def propose(self, episode: Episode) -> Plan: ...


@runtime_checkable
class Reviews(Protocol):
    """A policy that reviews a proposed action: None keeps it, a note (why not) strikes it."""

    def review(self, episode: Episode, choice: Choice) -> Plan: ...


def nothing() -> Plan:
    """A plan that proposes nothing (for a policy that has nothing to ask)."""
    return None
    yield  # pragma: no cover - makes this a generator
