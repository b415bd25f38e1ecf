"""The named lists of step policies: what `EnvAgent` plays with by default, and the variants the
benchmark measures (`rbdspy bench --agent`). Each is a list of parts, in the order they are asked.

- "plain" (`PLAIN_POLICIES`): the LM alone, the memory block in its prompt (the default where tasks
  share no world).
- "loop": the LM with a status line, no action repeated from the same state.
- "routes" (`OFFERED_POLICIES`): the LM chooses every action; the map's step is shown first in its
  list and the memory block is not in its prompt; no repeat, no unchecked answer.
- "routes-follow": the map's moves (and what opens a way) played unasked, then "routes".
- "routes-explore": and a way out after a few actions in one place where the map offers nothing.
- "routes-handle" (`WORLD_POLICIES`, the default in a world that persists): the answer scan, every
  step the map offers played unasked (an answer checked first), the way out, then the LM; no
  action outside a list of all the environment understands.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from rbdspy.agent.policies.answer_check import AnswerCheck
from rbdspy.agent.policies.answer_scan import AnswerScan
from rbdspy.agent.policies.explore import Explore
from rbdspy.agent.policies.follow_map import FollowMap
from rbdspy.agent.policies.listed_only import ListedOnly
from rbdspy.agent.policies.lm_choice import LMChoice
from rbdspy.agent.policies.repeat_guard import RepeatGuard
from rbdspy.agent.prompt import PromptView

# The LM's prompt with every aid but the memory block: a bank's memory reaches the agent as the
# map's steps, so a small model cannot copy actions from a sequence about something else.
WORLD_PROMPT = PromptView(status_line=True, focus=True, memory=False, offer=True)

PLAIN_POLICIES: tuple[Any, ...] = (LMChoice(PromptView()),)
OFFERED_POLICIES: tuple[Any, ...] = (LMChoice(WORLD_PROMPT), RepeatGuard(), AnswerCheck())
WORLD_POLICIES: tuple[Any, ...] = (
    AnswerScan(),
    FollowMap(),
    Explore(),
    LMChoice(WORLD_PROMPT),
    ListedOnly(),
    RepeatGuard(),
    AnswerCheck(),
)


@dataclass(frozen=True)
class ByWorld:
    """Policies chosen per task: `persistent` on a task in a world that persists (the environment
    names one), `elsewhere` on the others."""

    persistent: tuple[Any, ...] = WORLD_POLICIES
    elsewhere: tuple[Any, ...] = PLAIN_POLICIES

    def for_task(self, persistent: bool) -> tuple[Any, ...]:
        return self.persistent if persistent else self.elsewhere

    def changed(self, change: Callable[[Sequence[Any]], tuple[Any, ...]]) -> ByWorld:
        """The same change made to the policies of both kinds of task."""
        return ByWorld(change(self.persistent), change(self.elsewhere))


# What EnvAgent plays with where it is not told: the world's policies in a world that persists, the
# plain ones elsewhere (environments whose tasks share no world, where the others were not measured).
DEFAULT_POLICIES = ByWorld()

VARIANTS: dict[str, tuple[Any, ...] | ByWorld] = {
    "auto": DEFAULT_POLICIES,
    "plain": PLAIN_POLICIES,
    "loop": (LMChoice(PromptView(status_line=True)), RepeatGuard()),
    "routes": OFFERED_POLICIES,
    "routes-follow": (FollowMap(ways_only=True), *OFFERED_POLICIES),
    "routes-explore": (FollowMap(ways_only=True), Explore(), *OFFERED_POLICIES),
    "routes-handle": WORLD_POLICIES,
}


def variant(name: str) -> tuple[Any, ...] | ByWorld:
    """The policies of a named variant; a ValueError naming the variants for any other name."""
    if name not in VARIANTS:
        raise ValueError(f"unknown agent variant {name!r}; choose one of {', '.join(VARIANTS)}")
    return VARIANTS[name]


def lessons_in_prompt(policies: Sequence[Any] | ByWorld) -> tuple[Any, ...] | ByWorld:
    """`policies` for an agent that reads the lessons it is served: the memory block in the LM's
    prompt, no step of the map's followed, shown or scanned for (the paper's configuration)."""
    if isinstance(policies, ByWorld):
        return policies.changed(lessons_in_prompt)
    kept = [p for p in policies if not isinstance(p, (FollowMap, AnswerScan))]
    return tuple(LMChoice(replace(p.prompt, memory=True, offer=False)) if isinstance(p, LMChoice) else p for p in kept)
