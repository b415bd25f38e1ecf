"""What `rbdspy bench --agent` says of each agent variant, read from the variants themselves.

Why derived: the help was written by hand and drifted (it said "auto" meant `routes` long after
EnvAgent's default in a world that persists became `routes-handle`). Here each variant
(`agent_variants.AGENT_VARIANTS`, in its order) is described by its step policies, in the order
they are asked, and a variant chosen per task (`ByWorld`, "auto") by the variants it plays in a
world that persists and elsewhere. A changed or new variant changes its help with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rbdspy.agent.policies import ByWorld, FollowMap, LMChoice
from rbdspy.bench.agent_variants import AGENT_VARIANTS, USER_AGENTS


def policy_name(policy: Any) -> str:
    """A policy in a word or two: its class, and for the LM whether it reads the memory block or the
    map's step."""
    if isinstance(policy, LMChoice):
        prompt = policy.prompt
        reads = "map" if prompt.offer else "memory" if prompt.memory else ""
        return f"LM({reads})" if reads else "LM"
    if isinstance(policy, FollowMap) and policy.ways_only:
        return "FollowMap(ways)"
    return type(policy).__name__


def describe_policies(policies: Sequence[Any]) -> str:
    return ", ".join(policy_name(p) for p in policies)


def _name_of(policies: Sequence[Any]) -> str | None:
    return next(
        (n for n, v in AGENT_VARIANTS.items() if not isinstance(v, ByWorld) and tuple(v) == tuple(policies)), None
    )


def describe_variant(name: str) -> str:
    """What variant `name` plays with, in a few words (for "auto": "EnvAgent's own choice, per
    task: routes-handle in a world that persists, plain elsewhere")."""
    policies = AGENT_VARIANTS[name]
    if isinstance(policies, ByWorld):
        persistent, elsewhere = (
            _name_of(part) or f"({describe_policies(part)})" for part in (policies.persistent, policies.elsewhere)
        )
        return f"EnvAgent's own choice, per task: {persistent} in a world that persists, {elsewhere} elsewhere"
    return describe_policies(policies)


def describe_user_agent(name: str) -> str:
    options = USER_AGENTS[name]
    react = getattr(options.get("react"), "__name__", "ReAct")
    parts = [f"dspy.{react}"]
    if options.get("look_tool") is False:
        parts.append("act only, first view given")
    if options.get("play_to_end"):
        parts.append("to the end")
    if options.get("starter"):
        parts.append("shown an example")
    if options.get("compiled"):
        parts.append("with rbdspy's compiled demos")
    if options.get("show_map"):
        parts.append("map's step shown")
    return ", ".join(parts)


def agent_help() -> str:
    """`rbdspy bench --agent`'s help: every variant, each with its step policies (the LM's prompt
    left to the docs), and the user's agents."""
    variants = " | ".join(f"{name} ({describe_variant(name)})" for name in AGENT_VARIANTS)
    users = " | ".join(f"{name} ({describe_user_agent(name)})" for name in USER_AGENTS)
    return f"The agent every arm plays: EnvAgent's step policies in order: {variants}; a user's own: {users}."
