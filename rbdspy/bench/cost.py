"""Which LM calls of a task are the agent's own and which are the memory loop's (judge,
extractors, distiller, selector, refiner, workflow inducer): the loop's overhead is what memory
costs on top of acting.

A call is the agent's when its signature's output fields are one of EnvAgent's (its next action,
`NextAction`, and its answer check, `AskedFor`, `YesOrNo`) or a user's ReAct's; no prompt of the loop outputs any of
those fields (tests/bench/test_arm_costs.py checks). DSPy's adapters list a signature's output
fields in the system message, which is what the LM history keeps.

`arm_costs` sums an arm's records into what the results table shows beside success: the share of
actions the environment refused (steps the agent wasted on words the world does not understand)
and the loop's prompt tokens per task next to the agent's.
"""

from __future__ import annotations

import re
from typing import Any

from rbdspy.agent.user_react import STEP_OUTPUTS
from rbdspy.bench.records import REJECTED_FIELD
from rbdspy.signatures import AskedFor, NextAction, YesOrNo

AGENT, LOOP = "agent", "loop"
AGENT_SIGNATURES = (NextAction, AskedFor, YesOrNo)
# A user's ReAct (rbdspy.agent.user_react): its step predictor's outputs, and ReActV2's tool calls;
# its final answer (`reasoning`, `answer`) is the agent's through `answer` as EnvAgent's is.
REACT_OUTPUTS = frozenset({*STEP_OUTPUTS, "tool_calls"})
AGENT_OUTPUTS = frozenset(name for signature in AGENT_SIGNATURES for name in signature.output_fields) | REACT_OUTPUTS
_OUTPUTS = re.compile(r"Your output fields are:(.*?)(?:All interactions|\Z)", re.DOTALL)
_FIELD = re.compile(r"^\s*\d+\.\s*`(\w+)`", re.MULTILINE)  # "1. `action` (str): ..."


def lm_role(entry: dict) -> str:
    """AGENT or LOOP for one LM history entry."""
    messages = entry.get("messages") or []
    system = next((m.get("content") for m in messages if m.get("role") == "system"), None)
    text = system if isinstance(system, str) else str(entry.get("prompt") or "")
    outputs = _OUTPUTS.search(text)
    return AGENT if outputs and AGENT_OUTPUTS & set(_FIELD.findall(outputs.group(1))) else LOOP


def arm_costs(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One arm's waste and overhead from its records: the actions the environment refused among
    those played, and the prompt tokens per task of the agent and of the memory loop (the loop's
    share is of the agent's). A figure the records do not hold (records written before it was
    kept) is None, never a made-up 0."""
    return {**_rejected(rows), **_prompt_split(rows)}


def _rejected(rows: list[dict[str, Any]]) -> dict[str, Any]:
    counted = [r for r in rows if r.get(REJECTED_FIELD) is not None]
    rejected = sum(int(r[REJECTED_FIELD]) for r in counted) if counted else None
    actions = sum(int(r.get("env_actions", r.get("steps", 0)) or 0) for r in counted) if counted else None
    return {
        "rejected_actions": rejected,
        "actions_played": actions,
        "rejected_share": rejected / actions if actions else None,
    }


def _prompt_split(rows: list[dict[str, Any]]) -> dict[str, Any]:
    fields = (f"{AGENT}_prompt_tokens", f"{LOOP}_prompt_tokens")
    split = [r for r in rows if all(r.get(f) is not None for f in fields)]
    agent = sum(r[fields[0]] for r in split)
    loop = sum(r[fields[1]] for r in split)
    return {
        "agent_prompt_tokens_per_task": agent / len(split) if split else None,
        "loop_prompt_tokens_per_task": loop / len(split) if split else None,
        "loop_share_of_agent": loop / agent if agent else None,
    }
