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

import asyncio
import logging
from typing import Any

import dspy

from rbdspy.bench.signatures import InduceWorkflow
from rbdspy.modules.agent_io import acall_agent, output_fields, trajectory_of
from rbdspy.modules.extractor import Extractor, _as_verdict
from rbdspy.modules.judge import render_trajectory
from rbdspy.modules.lesson_caps import normalise_lessons
from rbdspy.modules.reasoning_bank import RESULT_FIELDS, ReasoningBank
from rbdspy.types import CONTENT_MAX, DESCRIPTION_MAX, MemoryItem, Trajectory, Verdict

log = logging.getLogger(__name__)

EXEMPLAR_OBSERVATION_CHARS = 100  # per step, so that a whole short episode fits in one item


class NoMemory(dspy.Module):
    """The agent with an empty memory block: no retrieval, no judge, no writes. Returns the
    agent's outputs plus `trajectory`, `verdict=None`, `memories_used=[]`, `memories_added=[]`."""

    def __init__(self, agent: dspy.Module, memory_field: str = "memory"):
        super().__init__()
        self.agent = agent
        self.memory_field = memory_field

    def _result(self, outputs: dict, task_inputs: dict) -> dspy.Prediction:
        task = str(task_inputs.get("task", ""))
        trajectory = trajectory_of(outputs, task, task_inputs)
        answer = {k: v for k, v in outputs.items() if k not in RESULT_FIELDS}
        return dspy.Prediction(**answer, trajectory=trajectory, verdict=None, memories_used=[], memories_added=[])

    def forward(self, **task_inputs: Any) -> dspy.Prediction:
        return self._result(output_fields(self.agent(**task_inputs, **{self.memory_field: ""})), task_inputs)

    async def aforward(self, **task_inputs: Any) -> dspy.Prediction:
        outputs = output_fields(await acall_agent(self.agent, **task_inputs, **{self.memory_field: ""}))
        return self._result(outputs, task_inputs)


class SuccessOnlyExtractor(Extractor):
    """An Extractor that distils successes only: a failure verdict extracts nothing and calls no LM."""

    def _route(self, task: str, trajectory: Any, verdict: Verdict | str):
        if _as_verdict(verdict).label == "failure":
            return None, None, None
        return super()._route(task, trajectory, verdict)


class SuccessOnlyBank(ReasoningBank):
    """ReasoningBank with failures not distilled. Everything else (judge, compiled prompts,
    retrieval, consolidation) is ReasoningBank's."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        gate = SuccessOnlyExtractor(self.extractor.max_lessons, self.extractor.max_chars)
        gate.load_state(self.extractor.dump_state())  # keep the compiled success prompt
        self.extractor = gate


class _SuccessMemory(ReasoningBank):
    """A bank that judges each trajectory like ReasoningBank but writes its own kind of item,
    from successes only. Subclasses say what to write (`_items`)."""

    def _items(self, trajectory: Trajectory) -> list[dict[str, str]]:  # pragma: no cover - abstract
        raise NotImplementedError

    async def _aitems(self, trajectory: Trajectory) -> list[dict[str, str]]:
        return await asyncio.to_thread(self._items, trajectory)

    def _store(self, drafts: list[dict[str, str]], trajectory: Trajectory, verdict: Verdict) -> list[MemoryItem]:
        return self.store_lessons(normalise_lessons(drafts, cap=1), trajectory, verdict, source="success")

    def ingest(self, trajectory: Any, task: str | None = None, outcome: bool | None = None) -> dspy.Prediction:
        trajectory = self._coerce(trajectory, task)
        verdict = (
            self._known_verdict(trajectory, outcome) or self.judge(task=trajectory.task, trajectory=trajectory).verdict
        )
        added = self._store(self._items(trajectory), trajectory, verdict) if verdict.is_success else []
        return dspy.Prediction(verdict=verdict, memories_added=added, trajectory=trajectory)

    async def aingest(self, trajectory: Any, task: str | None = None, outcome: bool | None = None) -> dspy.Prediction:
        trajectory = self._coerce(trajectory, task)
        verdict = self._known_verdict(trajectory, outcome)
        if verdict is None:
            verdict = (await self.judge.acall(task=trajectory.task, trajectory=trajectory)).verdict
        added = []
        if verdict.is_success:
            added = await asyncio.to_thread(self._store, await self._aitems(trajectory), trajectory, verdict)
        return dspy.Prediction(verdict=verdict, memories_added=added, trajectory=trajectory)


def _clip(text: str, limit: int) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def render_exemplar(trajectory: Trajectory, max_chars: int = CONTENT_MAX) -> str:
    """A trajectory as a compact exemplar: each action with the start of what it led to. The
    end of an episode (where it was won) is kept when the whole does not fit."""
    lines, last_action = [], None
    for step in trajectory.steps:
        if step.role == "agent":
            last_action = step.content.strip()
        elif step.role == "env" and last_action is not None:
            lines.append(f"> {last_action} -> {_clip(step.content, EXEMPLAR_OBSERVATION_CHARS)}")
            last_action = None
    if last_action is not None:
        lines.append(f"> {last_action}")
    if not lines:  # not an environment trajectory: the generic rendering
        return _clip(trajectory.render(max_chars), max_chars)
    text = " | ".join(lines)
    return text if len(text) <= max_chars else "…" + text[-(max_chars - 1) :]


class TrajectoryMemory(_SuccessMemory):
    """Synapse-style exemplar memory: the raw successful trajectory, capped, is the item."""

    def _items(self, trajectory: Trajectory) -> list[dict[str, str]]:
        return [
            {
                "title": _clip(f"Solved example: {trajectory.task}", 100),
                "description": _clip(f"A past task solved this way: {trajectory.task}", DESCRIPTION_MAX),
                "content": render_exemplar(trajectory),
            }
        ]


class WorkflowMemory(_SuccessMemory):
    """AWM-style workflow memory: one induced workflow (abstract steps) per success."""

    def __init__(self, *args: Any, max_chars: int = 6000, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.inducer = dspy.Predict(InduceWorkflow)
        self.max_chars = max_chars

    def _inputs(self, trajectory: Trajectory) -> dict[str, str]:
        return {"task": trajectory.task, "trajectory": render_trajectory(trajectory, trajectory.task, self.max_chars)}

    @staticmethod
    def _draft(pred: dspy.Prediction) -> list[dict[str, str]]:
        steps = [str(s).strip() for s in (getattr(pred, "steps", None) or []) if str(s).strip()]
        if not steps:
            return []
        content = " ".join(f"{i}. {s}" for i, s in enumerate(steps, start=1))
        return [
            {
                "title": str(getattr(pred, "title", "") or ""),
                "description": str(getattr(pred, "when_to_use", "") or ""),
                "content": content,
            }
        ]

    def _items(self, trajectory: Trajectory) -> list[dict[str, str]]:
        try:
            return self._draft(self.inducer(**self._inputs(trajectory)))
        except Exception as error:  # a malformed answer writes no memory
            log.warning("workflow induction failed: %s", error)
            return []

    async def _aitems(self, trajectory: Trajectory) -> list[dict[str, str]]:
        try:
            return self._draft(await self.inducer.acall(**self._inputs(trajectory)))
        except Exception as error:
            log.warning("workflow induction failed: %s", error)
            return []
