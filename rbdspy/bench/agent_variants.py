"""The named agents of `rbdspy bench --agent`: EnvAgent's configurations (lists of step policies,
`rbdspy.agent.policies.presets.VARIANTS`, where each is described; "auto" is EnvAgent's default,
`DEFAULT_POLICIES`: "routes-handle" in a world that persists, "plain" elsewhere) and a user's own
agent (`USER_AGENTS`): DSPy's ReAct over the environment's tools (`rbdspy.agent.user_react`), with
none of EnvAgent's techniques, as a user wraps it in a bank."""

from __future__ import annotations

from typing import Any

import dspy

from rbdspy.agent import EnvAgent
from rbdspy.agent.compiled_agent import shipped_for
from rbdspy.agent.policies.presets import VARIANTS, variant
from rbdspy.agent.user_react import UserReAct

SHIPPED = "shipped"  # a user agent's `compiled`: the program rbdspy ships for the environment

AGENT_VARIANTS = VARIANTS
# A user's own ReAct: its tools alone ("react"), or, shown the starter, naming the step the map of
# the task's world offers where a bank hands it one ("react-map"); "react-v2" is "react" on DSPy's ReActV2;
# "react-starter" is "react" shown one made-up episode in the environment's words first;
# "react-compiled" is "react" with the compiled program rbdspy ships for the environment (refused
# where none ships, as for every environment today)
# (`rbdspy.agent.compiled_agent`: demos BootstrapFewShot chose on train tasks, the starter after them);
# "react-act" and "react-act-map" are "react-starter" and "react-map" given the first observation as
# an input, with `act` their only tool (`look_tool=False`), played until the environment ends the
# episode (`play_to_end`).
USER_AGENTS: dict[str, dict[str, Any]] = {
    "react": {"show_map": False},
    "react-starter": {"show_map": False, "starter": True},
    "react-compiled": {"show_map": False, "compiled": SHIPPED},
    "react-map": {"show_map": True, "starter": True},
    "react-v2": {"show_map": False, "react": dspy.ReActV2},
    "react-act": {"show_map": False, "starter": True, "look_tool": False, "play_to_end": True},
    "react-act-map": {"show_map": True, "starter": True, "look_tool": False, "play_to_end": True},
}


def agent_options(name: str) -> dict[str, Any]:
    """EnvAgent's options for a named variant, or a user agent's (a ValueError naming them all for
    another name)."""
    if name in USER_AGENTS:
        return dict(USER_AGENTS[name])
    if name not in VARIANTS:
        known = ", ".join([*VARIANTS, *USER_AGENTS])
        raise ValueError(f"unknown agent variant {name!r}; choose one of {known}")
    return {"policies": variant(name)}


def make_agent(name: str, env: Any, max_steps: int) -> dspy.Module:
    """The agent `name` names, on `env`, with `max_steps` steps (a ReAct's iterations)."""
    options = agent_options(name)
    if name in USER_AGENTS:
        if options.get("compiled") == SHIPPED:
            options["compiled"] = shipped_for(env.name)
        return UserReAct(env, max_iters=max_steps, **options)
    return EnvAgent(env, max_steps=max_steps, **options)
