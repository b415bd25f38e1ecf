"""ReasoningBank: the whole memory loop as one DSPy program.

retrieve -> act (the wrapped agent, memory block injected) -> judge -> extract -> consolidate -> store
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import dspy

from rbdspy.memory import format_memory_block, make_policy
from rbdspy.modules import compiled as compiled_prompts
from rbdspy.modules.agent_io import acall_agent, accepts_input, output_fields, task_text, trajectory_of
from rbdspy.modules.distiller import ContrastiveDistiller
from rbdspy.modules.extractor import Extractor
from rbdspy.modules.judge import Judge
from rbdspy.modules.retriever import DEFAULT_K, MemoryRetriever
from rbdspy.types import MemoryItem, Provenance, SourceKind, Trajectory, Verdict

RESULT_FIELDS = ("verdict", "memories_used", "memories_added", "trajectory")


class ReasoningBank(dspy.Module):
    """Wraps any agent `dspy.Module` with a memory that learns from the agent's successes and
    failures.

    `bank(**task_inputs)` retrieves the top-k items for the task, passes them to the agent as a
    fenced data block through the input the agent declares (`memory_field`, default
    "memory"), runs the agent, judges the trajectory, extracts lessons and stores them. It
    returns the agent's outputs plus `verdict`, `memories_used`, `memories_added` and
    `trajectory`.

    Args:
        agent: any dspy.Module (or Predict) with an input named `memory_field`. If it returns a
            `trajectory` (an rbdspy Trajectory, a message list or dspy.ReAct's dict) that is
            what gets judged; otherwise its inputs and outputs are.
        store: a `MemoryStore`. Shared, never copied: optimizers' deep copies of the bank use
            the same store, and `save()` writes prompts only.
        k: items retrieved per task (default 1, the paper's best; 0 disables retrieval).
        scope: items are written with this scope and retrieval only sees this scope.
        consolidation: "append" (the paper's default), "dedup", or a policy object.
        task_field: which input is the task text (default: `task`, or the only input).
        trust_outcome: when the agent's trajectory carries a ground-truth outcome (an
            environment's reward), use it instead of the judge.
        compiled: compiled prompts for the judge and the extractors. By default the ones the
            package ships (`rbdspy/compiled/`), where present; a path to the output directory of
            `rbdspy compile` (or a .json saved by `save()`) loads those instead; None or False
            keeps the hand-written prompts. `compiled_from` lists the files loaded.
    """

    def __init__(
        self,
        agent: dspy.Module,
        store,
        k: int = DEFAULT_K,
        *,
        scope: str | None = None,
        consolidation: Any = "append",
        memory_field: str = "memory",
        task_field: str | None = None,
        trust_outcome: bool = False,
        compiled: Any = compiled_prompts.DEFAULT,
    ):
        super().__init__()
        if not isinstance(agent, dspy.Module):
            raise TypeError(
                f"agent must be a dspy.Module (e.g. dspy.ChainOfThought('task, memory -> answer')); got {type(agent).__name__}"
            )
        if not accepts_input(agent, memory_field):
            raise ValueError(
                f"agent {type(agent).__name__} has no input named {memory_field!r} to receive the memory block: "
                f"add a `{memory_field}` input field to its signature (or a `{memory_field}` argument to its forward), "
                "or pass memory_field='<the input it has>'"
            )
        self.agent = agent
        self.store = store
        self.retriever = MemoryRetriever(store, k=k, scope=scope)
        self.judge = Judge()
        self.extractor = Extractor()
        self.distiller = ContrastiveDistiller()
        self.policy = make_policy(consolidation)
        self.scope = scope
        self.memory_field = memory_field
        self.task_field = task_field
        self.trust_outcome = trust_outcome
        self.compiled_from: list[str] = []
        self._load_compiled(compiled)

    def _load_compiled(self, compiled: Any) -> None:
        path, required = compiled_prompts.resolve(compiled)
        if path is None:
            return
        if path.suffix == ".json" and not path.is_dir():
            if not path.is_file():
                raise FileNotFoundError(f"no compiled program at {path}")
            self.load(path)
        else:
            self.compiled_from = compiled_prompts.load_directory(self, path, required)

    # ---- the loop -------------------------------------------------------------------------

    def _prepare(self, task_inputs: dict[str, Any]) -> str:
        if self.memory_field in task_inputs:
            raise ValueError(f"{self.memory_field!r} is filled by the bank from memory; do not pass it as an input")
        return task_text(task_inputs, self.task_field)

    def _agent_inputs(self, task_inputs: dict[str, Any], used: list[MemoryItem]) -> dict[str, Any]:
        return {**task_inputs, self.memory_field: format_memory_block(used)}

    def _known_verdict(self, trajectory: Trajectory, outcome: bool | None) -> Verdict | None:
        if outcome is not None:
            return Verdict.from_outcome(outcome)
        if self.trust_outcome and trajectory.outcome is not None:
            return Verdict.from_outcome(trajectory.outcome)
        return None

    def _result(self, outputs, trajectory, verdict, used, added) -> dspy.Prediction:
        answer = {k: v for k, v in outputs.items() if k not in RESULT_FIELDS}
        return dspy.Prediction(
            **answer, verdict=verdict, memories_used=used, memories_added=added, trajectory=trajectory
        )

    def forward(self, **task_inputs: Any) -> dspy.Prediction:
        task = self._prepare(task_inputs)
        used = self.retriever(task=task).memories
        outputs = output_fields(self.agent(**self._agent_inputs(task_inputs, used)))
        trajectory = trajectory_of(outputs, task, task_inputs)
        learned = self.ingest(trajectory, task=task)
        self.store.mark_used([item.id for item in used])
        return self._result(outputs, trajectory, learned.verdict, used, learned.memories_added)

    async def aforward(self, **task_inputs: Any) -> dspy.Prediction:
        task = self._prepare(task_inputs)
        used = (await self.retriever.acall(task=task)).memories
        outputs = output_fields(await acall_agent(self.agent, **self._agent_inputs(task_inputs, used)))
        trajectory = trajectory_of(outputs, task, task_inputs)
        learned = await self.aingest(trajectory, task=task)
        await asyncio.to_thread(self.store.mark_used, [item.id for item in used])
        return self._result(outputs, trajectory, learned.verdict, used, learned.memories_added)

    # ---- learning from a trajectory the caller already has ----------------------------------

    def ingest(self, trajectory: Any, task: str | None = None, outcome: bool | None = None) -> dspy.Prediction:
        """Judge (unless `outcome` is known), extract and store lessons from one trajectory.

        Returns `Prediction(verdict, memories_added, trajectory)`. An indeterminate verdict
        writes nothing.
        """
        trajectory = self._coerce(trajectory, task)
        verdict = (
            self._known_verdict(trajectory, outcome) or self.judge(task=trajectory.task, trajectory=trajectory).verdict
        )
        lessons = self.extractor(task=trajectory.task, trajectory=trajectory, verdict=verdict).lessons
        added = self.store_lessons(lessons, trajectory, verdict, source=verdict.label)
        return dspy.Prediction(verdict=verdict, memories_added=added, trajectory=trajectory)

    async def aingest(self, trajectory: Any, task: str | None = None, outcome: bool | None = None) -> dspy.Prediction:
        trajectory = self._coerce(trajectory, task)
        verdict = self._known_verdict(trajectory, outcome)
        if verdict is None:
            verdict = (await self.judge.acall(task=trajectory.task, trajectory=trajectory)).verdict
        lessons = (await self.extractor.acall(task=trajectory.task, trajectory=trajectory, verdict=verdict)).lessons
        added = await asyncio.to_thread(self.store_lessons, lessons, trajectory, verdict, verdict.label)
        return dspy.Prediction(verdict=verdict, memories_added=added, trajectory=trajectory)

    @staticmethod
    def _coerce(trajectory: Any, task: str | None) -> Trajectory:
        trajectory = Trajectory.coerce(trajectory, task=task)
        if not trajectory.task:
            raise ValueError("ingest needs the task: pass task='...' or a Trajectory whose task is set")
        return trajectory

    def store_lessons(
        self,
        lessons,
        trajectory: Trajectory,
        verdict: Verdict,
        source: SourceKind,
        provenance: list[Provenance] | None = None,
    ) -> list[MemoryItem]:
        """Consolidate lessons into the store with their provenance; nothing from an
        indeterminate verdict.

        `provenance` replaces the single entry built from `trajectory` and `verdict`: lessons
        distilled from several trajectories (MaTTS contrast) cite each of them."""
        if not lessons or not verdict.is_determinate:
            return []
        if not provenance:
            provenance = [
                Provenance(
                    task=trajectory.task,
                    trajectory_id=trajectory.id,
                    verdict=verdict.label,
                    rationale=verdict.rationale,
                )
            ]
        items = [
            MemoryItem.from_lesson(lesson, source=source, provenance=list(provenance), scope=self.scope)
            for lesson in lessons
        ]
        return self.policy.apply(self.store, items)

    # ---- retrieval and persistence -----------------------------------------------------------

    def retrieve(self, task: str, k: int | None = None, scope: str | None = None) -> list[MemoryItem]:
        """The items the bank would show the agent for `task` (does not count as a use)."""
        return self.retriever(task=task, k=k, scope=scope).memories

    def save(self, path, save_program: bool = False, modules_to_serialize=None):
        """Saves every predictor's prompts and demos as JSON. The store persists itself and is
        never serialised here."""
        if save_program or Path(path).suffix != ".json":
            raise ValueError(f"ReasoningBank saves its prompts as JSON only: use a path ending in .json (got {path!r})")
        return super().save(path)

    def load(self, path, allow_pickle: bool = False, allow_unsafe_lm_state: bool = False):
        """Loads prompts saved by `save()`, or a directory written by `rbdspy compile`
        (judge.json / extractors.json). JSON only: a saved program is never unpickled."""
        if not allow_pickle and Path(path).is_dir():
            self.compiled_from = compiled_prompts.load_directory(self, Path(path), required=True)
            return self
        if allow_pickle or Path(path).suffix != ".json":
            raise ValueError(f"ReasoningBank loads JSON only, never pickle: use a .json file (got {path!r})")
        result = super().load(path, allow_unsafe_lm_state=allow_unsafe_lm_state)
        self.compiled_from = [str(path)]
        return result
