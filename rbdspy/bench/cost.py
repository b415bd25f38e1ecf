"""Which LM calls of a task are the agent's own and which are the memory loop's (judge,
extractors, distiller, selector, refiner, workflow inducer): the loop's overhead is what memory
costs on top of acting.

A call is the agent's when its signature's output fields include `action` (EnvAgent's
`NextAction`); DSPy's adapters list a signature's output fields in the system message, which is
what the LM history keeps.
"""

from __future__ import annotations

import re

AGENT, LOOP = "agent", "loop"
_OUTPUTS = re.compile(r"Your output fields are:(.*?)(?:All interactions|\Z)", re.DOTALL)


def lm_role(entry: dict) -> str:
    """AGENT or LOOP for one LM history entry."""
    messages = entry.get("messages") or []
    system = next((m.get("content") for m in messages if m.get("role") == "system"), None)
    text = system if isinstance(system, str) else str(entry.get("prompt") or "")
    outputs = _OUTPUTS.search(text)
    return AGENT if outputs and "`action`" in outputs.group(1) else LOOP
