"""Parallel MaTTS rollouts as Ray tasks (`MaTTS(..., executor="ray")`), for agents that can travel.

Why: k rollouts of an agent whose work is CPU-bound in Python (an in-process model, a simulator)
take turns on one process's GIL, whether run one after another or with asyncio; as Ray tasks they
run on k cores, or k machines. Only the rollouts leave the process. Judging, selection and
distillation stay with the bank, whose store cannot be pickled and must see its writes in order.

Each remote rollout is `rollout_plan` as the in-process one runs it (the same sampled LM copy,
rollout id and temperature, under the caller's adapter), so it returns the same `Rollout`. What
does not come back: changes the agent makes to itself (each worker holds a copy) and DSPy
callbacks (they run in the worker, not here). The LM calls a rollout made do come back, into
this process's DSPy history, so `rbdspy.lm.usage.LmUsage` (and the bench's cost columns) count them.
"""

from __future__ import annotations

import functools
from typing import Any

import dspy
from dspy.clients import base_lm

from rbdspy.core.plan import run
from rbdspy.lm.local_engine import fit_threads
from rbdspy.ray_support import check_picklable, cpus_per_task, ensure_ray, get, import_ray, task_cpus
from rbdspy.scaling.rollout import Rollout, rollout_plan

# The history fields worth carrying back: what LmUsage and inspect_history read, nothing that
# holds a provider's response object.
_HISTORY_KEYS = ("prompt", "messages", "outputs", "usage", "cost", "timestamp", "uuid", "model", "model_type")
_AGENT_FIX = (
    "MaTTS(executor='ray') sends the agent to Ray workers, and an agent holding a live environment "
    "(EnvAgent) or an open handle cannot travel; use executor='local'"
)


def check_agent(agent: Any) -> None:
    """Raises (RayMissingError, NotPicklableError) unless `agent` can be sent to Ray workers."""
    check_picklable(agent, f"the agent ({type(agent).__name__})", _AGENT_FIX)


def _remote_rollout(
    agent, agent_inputs: dict, task: str, index: int, lm, rollout_id, temperature, adapter
) -> tuple[Rollout, list[dict]]:
    """In the worker: one rollout, and the LM history entries it added."""
    import ray.cloudpickle  # optional: the scale extra (ray); runs in a Ray worker

    fit_threads(lm, task_cpus())  # the CPUs this rollout's task was given, not every core
    seen = {id(entry) for entry in base_lm.GLOBAL_HISTORY}
    with dspy.context(lm=lm, adapter=adapter):
        rollout = run(
            rollout_plan(agent, agent_inputs, task, index, lm=lm, rollout_id=rollout_id, temperature=temperature)
        )
    if rollout.exception is not None:
        try:
            ray.cloudpickle.dumps(rollout.exception)
        except Exception:  # an exception that cannot travel is replaced by its text
            rollout.exception = RuntimeError(rollout.error)
    entries = [
        {key: entry[key] for key in _HISTORY_KEYS if key in entry}
        for entry in base_lm.GLOBAL_HISTORY
        if id(entry) not in seen
    ]
    return rollout, entries


@functools.cache
def _remote(cpus: int):
    return import_ray().remote(num_cpus=cpus, max_retries=0)(_remote_rollout)


def _record(entries: list[dict]) -> None:
    if dspy.settings.disable_history:
        return
    for entry in entries:
        if len(base_lm.GLOBAL_HISTORY) >= base_lm.MAX_HISTORY_SIZE:
            base_lm.GLOBAL_HISTORY.pop(0)
        base_lm.GLOBAL_HISTORY.append(entry)


def remote_rollouts(
    agent, agent_inputs: dict, task: str, lm: dspy.BaseLM, draws: list[tuple[Any, float | None]]
) -> list[Rollout]:
    """The rollouts of `agent`, one Ray task per (rollout id, temperature) in `draws`, in order
    ((None, None): the LM as configured). Uses the Ray this process is connected to, or starts a
    local one (kept for the next task)."""
    ray = import_ray()
    check_picklable(lm, f"the LM ({type(lm).__name__})", "use MaTTS(executor='local') with this LM")
    ensure_ray()
    agent_ref = ray.put(agent)
    adapter = dspy.settings.adapter
    remote = _remote(cpus_per_task(len(draws)))  # each rollout's share of the cluster
    refs = [
        remote.remote(agent_ref, agent_inputs, task, index, lm, rollout_id, temperature, adapter)
        for index, (rollout_id, temperature) in enumerate(draws)
    ]
    rollouts = []
    for rollout, entries in get(refs):
        _record(entries)
        rollouts.append(rollout)
    return rollouts
