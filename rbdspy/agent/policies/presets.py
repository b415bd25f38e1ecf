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

# "auto" is chosen per task (`policies_for`); every other variant is the same on every task.
VARIANTS: dict[str, tuple[Any, ...] | None] = {
    "auto": None,
    "plain": PLAIN_POLICIES,
    "loop": (LMChoice(PromptView(status_line=True)), RepeatGuard()),
    "routes": OFFERED_POLICIES,
    "routes-follow": (FollowMap(ways_only=True), *OFFERED_POLICIES),
    "routes-explore": (FollowMap(ways_only=True), Explore(), *OFFERED_POLICIES),
    "routes-handle": WORLD_POLICIES,
}


def policies_for(persistent: bool) -> tuple[Any, ...]:
    """The default policies of a task: `WORLD_POLICIES` in a world that persists, else the plain."""
    return WORLD_POLICIES if persistent else PLAIN_POLICIES


def variant(name: str) -> tuple[Any, ...] | None:
    """The policies of a named variant (None for "auto": chosen per task); a ValueError naming the
    variants for any other name."""
    if name not in VARIANTS:
        raise ValueError(f"unknown agent variant {name!r}; choose one of {', '.join(VARIANTS)}")
    return VARIANTS[name]
