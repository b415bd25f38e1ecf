"""The named EnvAgent configurations of `rbdspy bench --agent`: lists of step policies
(`rbdspy.agent.policies.presets.VARIANTS`, where each is described); "auto" is EnvAgent's default
(`DEFAULT_POLICIES`: "routes-handle" in a world that persists, "plain" elsewhere)."""

from __future__ import annotations

from typing import Any

from rbdspy.agent.policies.presets import VARIANTS, variant

AGENT_VARIANTS = VARIANTS


def agent_options(name: str) -> dict[str, Any]:
    """EnvAgent's options for a named variant (a ValueError naming the variants for another)."""
    return {"policies": variant(name)}
