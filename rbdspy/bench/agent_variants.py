"""The named EnvAgent configurations of `rbdspy bench --agent`: what the agent's loop aids
(`rbdspy.agent.agent_loop`) are measured as.

Each variant is the aids it turns on, the others off; "auto" is EnvAgent's default
(`DEFAULT_AIDS`: "routes-handle" in a world that persists, none elsewhere).
"""

from __future__ import annotations

from rbdspy.agent.agent_loop import DEFAULT_AIDS, NO_AIDS, OFFERED_AIDS, WORLD_AIDS, Aids, AidsByWorld

AGENT_VARIANTS: dict[str, Aids | AidsByWorld] = {
    "auto": DEFAULT_AIDS,
    "plain": NO_AIDS,
    "status": NO_AIDS.replace(status_line=True),
    "guard": NO_AIDS.replace(repeat_guard=True),
    "loop": NO_AIDS.replace(status_line=True, repeat_guard=True),
    "suggest": NO_AIDS.replace(suggest=True),
    "loop-suggest": NO_AIDS.replace(status_line=True, repeat_guard=True, suggest=True),
    "focus": NO_AIDS.replace(focus=True),
    "full": NO_AIDS.replace(status_line=True, repeat_guard=True, suggest=True, focus=True),
    # Memory only as suggested actions: the block itself is not in the prompt, and the LM chooses
    # whether to play what the map offers.
    "routes": OFFERED_AIDS,
    # The same, with the map's moves taken without an LM call (the LM chooses every other action).
    "routes-follow": OFFERED_AIDS.replace(follow=True),
    # ...and, after actions that led nowhere new, the environment's way out to a place not visited.
    "routes-explore": OFFERED_AIDS.replace(follow=True, explore=True),
    # ...and what a past task of this kind did with a thing in view, taken too (answers checked), and
    # an action written outside a list of all the environment understands asked again among it, and,
    # with memory, where the environment names answers, the answer the check likes best among those
    # in view (none the agent's past episodes lost on) played once it is sure enough: what EnvAgent
    # plays with in a world that persists.
    "routes-handle": WORLD_AIDS,
}


def agent_options(variant: str) -> dict[str, Aids | AidsByWorld]:
    """EnvAgent's options for a named variant."""
    if variant not in AGENT_VARIANTS:
        raise ValueError(f"unknown agent variant {variant!r}; choose one of {', '.join(AGENT_VARIANTS)}")
    return {"aids": AGENT_VARIANTS[variant]}
