"""The memory designs ReasoningBank is compared with, built from the same parts so that only the
memory design differs between arms (same agent, same judge, same store, same retrieval, same
fenced memory block).

- `NoMemory`: the agent alone, an empty memory block, no judge and no writes.
- `SuccessOnlyBank`: ReasoningBank whose failures are not distilled (no extraction call on a
  failure verdict): isolates what the failure guardrails add.
- `TrajectoryMemory` (Synapse-style, Zheng et al. 2024): stores the raw trajectories the judge
  labels successes (rendered as actions and short observations, capped) and retrieves them as
  exemplars by task similarity.
- `WorkflowMemory` (AWM-style, Wang et al. 2024): induces one reusable workflow (abstract steps)
  from each trajectory the judge labels a success, with a small DSPy signature; failures are
  not used.

Synapse and AWM learn from successes only, which is the contrast the paper draws: ReasoningBank
also learns from failures.
"""

from __future__ import annotations

from typing import Any

import dspy

from rbdspy.core.lm_errors import attempt, call_agent
from rbdspy.core.plan import Plan, arun, run
from rbdspy.judge.trajectory_text import render_trajectory
from rbdspy.lessons.exemplar import ExemplarWriter
from rbdspy.lessons.extractor import Extractor
from rbdspy.lessons.success_writer import SuccessItemWriter
from rbdspy.loop.agent_io import output_fields, trajectory_of
from rbdspy.loop.reasoning_bank import RESULT_FIELDS, ReasoningBank
from rbdspy.memory import MemoryStore
from rbdspy.signatures.workflow import InduceWorkflow
from rbdspy.types import Trajectory, Verdict


class NoMemory(dspy.Module):
    """The agent with an empty memory block: no retrieval, no judge, no writes. Returns the
    agent's outputs plus `trajectory`, `verdict=None`, `memories_used=[]`, `memories_added=[]`."""

    def __init__(self, agent: dspy.Module, memory_field: str = "memory"):
        super().__init__()
        self.agent = agent
        self.memory_field = memory_field

    def _plan(self, task_inputs: dict) -> Plan:
        outputs = output_fields((yield from call_agent(self.agent, {**task_inputs, self.memory_field: ""})))
        trajectory = trajectory_of(outputs, str(task_inputs.get("task", "")), task_inputs)
        answer = {k: v for k, v in outputs.items() if k not in RESULT_FIELDS}
        return dspy.Prediction(**answer, trajectory=trajectory, verdict=None, memories_used=[], memories_added=[])

    def forward(self, **task_inputs: Any) -> dspy.Prediction:
        return run(self._plan(task_inputs))

    async def aforward(self, **task_inputs: Any) -> dspy.Prediction:
        return await arun(self._plan(task_inputs))


class SuccessOnlyExtractor(Extractor):
    """An Extractor that distils successes only: a failure verdict extracts nothing and calls no LM."""

    def predictor_for(self, verdict: Verdict) -> dspy.Predict | None:
        return super().predictor_for(verdict) if verdict.is_success else None


def _own_extractor(bank: str, given: Any, cls: type[dspy.Module]) -> dspy.Module:
    """A baseline's extractor part: `given` as it is, `cls()` when None; a TypeError when it is
    not the baseline's kind (its memory design is what its extractor writes)."""
    if given is None:
        return cls()
    if not isinstance(given, cls):
        raise TypeError(f"{bank}'s extractor must be a {cls.__name__} (its memory design); got {type(given).__name__}")
    return given


class SuccessOnlyBank(ReasoningBank):
    """ReasoningBank with failures not distilled: its extractor is a `SuccessOnlyExtractor`, an
    Extractor that renders and records as it is built to
    (`extractor=SuccessOnlyExtractor(renderer=..., action_record=...)`; by default an
    Extractor's defaults). Everything else (judge, compiled prompts, retrieval, consolidation)
    is ReasoningBank's, passed as to ReasoningBank."""

    def __init__(
        self,
        agent: dspy.Module,
        store: MemoryStore,
        *,
        extractor: SuccessOnlyExtractor | None = None,
        **parts_and_options: Any,
    ):
        extractor = _own_extractor(type(self).__name__, extractor, SuccessOnlyExtractor)
        super().__init__(agent, store, extractor=extractor, **parts_and_options)


class WorkflowInducer(SuccessItemWriter):
    """AWM-style: one workflow (abstract steps) induced from a success by `InduceWorkflow`."""

    def __init__(self, max_chars: int = 6000):
        super().__init__()
        self.max_chars = max_chars
        self.induce = dspy.Predict(InduceWorkflow)

    def _drafts(self, trajectory: Trajectory) -> Plan:
        inputs = {"task": trajectory.task, "trajectory": render_trajectory(trajectory, trajectory.task, self.max_chars)}
        pred, error = yield from attempt(self.induce, inputs, "workflow induction")
        if error is not None:  # a malformed answer writes no memory
            return []
        steps = [str(s).strip() for s in (getattr(pred, "steps", None) or []) if str(s).strip()]
        if not steps:
            return []
        content = " ".join(f"{i}. {s}" for i, s in enumerate(steps, start=1))
        title = str(getattr(pred, "title", "") or "")
        return [{"title": title, "description": str(getattr(pred, "when_to_use", "") or ""), "content": content}]


class TrajectoryMemory(ReasoningBank):
    """Synapse-style exemplar memory: judged like ReasoningBank, but each success is stored as
    its raw trajectory (capped) and failures write nothing. Its extractor is an `ExemplarWriter`;
    the other parts and options are ReasoningBank's."""

    def __init__(
        self,
        agent: dspy.Module,
        store: MemoryStore,
        *,
        extractor: ExemplarWriter | None = None,
        **parts_and_options: Any,
    ):
        extractor = _own_extractor(type(self).__name__, extractor, ExemplarWriter)
        super().__init__(agent, store, extractor=extractor, **parts_and_options)


class WorkflowMemory(ReasoningBank):
    """AWM-style workflow memory: judged like ReasoningBank, but each success is stored as one
    induced workflow and failures write nothing. Its extractor is a `WorkflowInducer`
    (`extractor=WorkflowInducer(max_chars=...)`); the other parts and options are ReasoningBank's."""

    def __init__(
        self,
        agent: dspy.Module,
        store: MemoryStore,
        *,
        extractor: WorkflowInducer | None = None,
        **parts_and_options: Any,
    ):
        extractor = _own_extractor(type(self).__name__, extractor, WorkflowInducer)
        super().__init__(agent, store, extractor=extractor, **parts_and_options)
