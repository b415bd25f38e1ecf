"""The named EnvAgent configurations of `rbdspy bench --agent`: what the agent's loop aids
(`rbdspy.agent.agent_loop`) are measured as.

Each variant names the aids it turns on; the others are off. "auto" leaves each to the
environment (`EnvAgent`'s default, `agent_loop.aids_for`): "routes" in a world that persists,
none elsewhere.
"""

from __future__ import annotations

from rbdspy.agent.agent_loop import AIDS_OFF, PERSISTENT_WORLD_AIDS

AGENT_VARIANTS: dict[str, dict[str, bool]] = {
    "auto": {},
    "plain": {},
    "status": {"status_line": True},
    "guard": {"repeat_guard": True},
    "loop": {"status_line": True, "repeat_guard": True},
    "suggest": {"suggest": True},
    "loop-suggest": {"status_line": True, "repeat_guard": True, "suggest": True},
    "focus": {"focus": True},
    "full": {"status_line": True, "repeat_guard": True, "suggest": True, "focus": True},
    # Memory only as suggested actions: the block itself is not in the prompt. What EnvAgent plays
    # with in a world that persists.
    "routes": dict(PERSISTENT_WORLD_AIDS),
}
AUTO_VARIANT = "auto"


def agent_options(variant: str) -> dict[str, bool]:
    """EnvAgent's options for a named variant: every aid set ({} for "auto": the environment's)."""
    if variant not in AGENT_VARIANTS:
        raise ValueError(f"unknown agent variant {variant!r}; choose one of {', '.join(AGENT_VARIANTS)}")
    if variant == AUTO_VARIANT:
        return {}
    return {**AIDS_OFF, **AGENT_VARIANTS[variant]}
