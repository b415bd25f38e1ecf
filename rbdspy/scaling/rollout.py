"""One agent rollout for test-time scaling: the agent run once on the task, under its own sampled
LM, with any exception recorded instead of raised.

Why a separate helper: parallel MaTTS, its vanilla baseline and sequential MaTTS all start from
rollouts, and each needs the same three guarantees.

- Rollouts really differ. DSPy caches on the request, so k identical calls would return one
  answer k times. Each rollout runs under `lm.copy(rollout_id=..., temperature=...)`: the
  rollout id is part of DSPy's cache key, and a temperature above zero makes the provider (or
  rbdspy's local engine, which derives a per-rollout seed from the id via
  `RolloutSeedCallback`) sample. Only the agent runs under the sampled copy; judging,
  selection and distillation stay on the caller's LM.
- A rollout that raises does not abort the others: it comes back with `error` set and no
  trajectory, and is left out of selection and of memory.
- `dspy.context` lives in a context variable, so concurrent rollouts (asyncio tasks) each see
  their own LM.

An agent predictor that carries its own LM (`predictor.lm = ...`) ignores `dspy.context`; such
predictors are not re-sampled.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import dspy

from rbdspy.core.lm_errors import LMSetupError, call_agent
from rbdspy.core.plan import Plan
from rbdspy.loop.agent_io import output_fields, trajectory_of
from rbdspy.types import Trajectory, Verdict

log = logging.getLogger(__name__)

DEFAULT_TEMPERATURE = 0.7


@dataclass
class Rollout:
    """What one rollout (or, in sequential mode, one refinement pass) produced.

    `outputs` are the agent's output fields; `trajectory` what gets judged and contrasted;
    `verdict` is set once judged (None when not judged or failed); `error` is
    "ExceptionType: message" when the rollout raised; `notes` holds a refinement pass's notes.
    """

    index: int
    rollout_id: Any = None
    temperature: float | None = None
    outputs: dict[str, Any] = field(default_factory=dict)
    trajectory: Trajectory | None = None
    verdict: Verdict | None = None
    error: str | None = None
    notes: str | None = None
    exception: BaseException | None = field(default=None, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.error is None and self.trajectory is not None


def sampled_lm(lm: dspy.BaseLM, rollout_id: Any, temperature: float | None) -> dspy.BaseLM:
    """A copy of `lm` whose requests carry `rollout_id` (and `temperature`, when given); `lm`
    itself when neither is given (a plain rollout)."""
    if rollout_id is None and temperature is None:
        return lm
    updates: dict[str, Any] = {"rollout_id": rollout_id}
    if temperature is not None:
        updates["temperature"] = temperature
    return lm.copy(**updates)


def rollout_plan(
    agent: dspy.Module,
    agent_inputs: dict[str, Any],
    task: str,
    index: int,
    *,
    lm: dspy.BaseLM | None = None,
    rollout_id: Any = None,
    temperature: float | None = None,
) -> Plan:
    """Plan: `agent(**agent_inputs)` once, under a sampled copy of `lm` when `lm` is given.
    A setup mistake (no LM, an unknown model) raises; any other error is recorded."""
    rollout = Rollout(index=index, rollout_id=rollout_id, temperature=temperature)
    sampled = sampled_lm(lm, rollout_id, temperature) if lm is not None else None
    try:
        pred = yield from call_agent(agent, agent_inputs, lm=sampled)
    except Exception as error:  # one rollout's failure must not abort the others; a setup mistake does
        if isinstance(error, LMSetupError):
            raise
        log.warning("rollout %d failed: %s", index, error)
        rollout.error, rollout.exception = f"{type(error).__name__}: {error}"[:1000], error
        return rollout
    rollout.outputs = output_fields(pred)
    rollout.trajectory = trajectory_of(rollout.outputs, task, agent_inputs)
    return rollout


def step_count(trajectory: Trajectory) -> int:
    """Actions taken: an environment's own count when it reports one, else the number of steps."""
    n = trajectory.metadata.get("n_steps")
    return n if isinstance(n, int) and not isinstance(n, bool) else len(trajectory.steps)
