"""Learner: the one place where rbdspy learns from experience.

Every way of learning in rbdspy is the same step: label the trajectory (the known outcome when
there is one, else the LM judge), distil lessons from it (the extractor for one trajectory, the
contrastive distiller for several attempts at one task), consolidate them into the store with
their provenance, add each stored episode's typed experience to the map of its world (`maps`),
and record which stored items were served for the task. `ReasoningBank`,
`MaTTS` (both modes), `VanillaTTS` and the benchmark baselines all learn through a `Learner`,
so a change to that step (how uses are credited, how lessons are gated) is made here once.

The LM-backed parts (judge, extractor, distiller) belong to the program that owns the learner
(the bank, built from them), where optimizers see and compile them; the learner reads them from
its owner at each call, so a bank of another design (a baseline's own extractor) is obeyed.

Each step is a plan (see `plan.py`): one implementation, run by `learn` or awaited by `alearn`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import dspy

from rbdspy.core.plan import Blocking, Call, Plan, arun, run
from rbdspy.maps.world_maps import WorldMaps
from rbdspy.memory import MemoryStore, make_policy
from rbdspy.memory.consolidation import ConsolidationPolicy
from rbdspy.memory.defence import Quarantine
from rbdspy.types import MemoryItem, Provenance, SourceKind, Trajectory, Verdict


def provenance_of(trajectory: Trajectory, verdict: Verdict, situation: str | None = None) -> Provenance:
    return Provenance(
        task=trajectory.task,
        trajectory_id=trajectory.id,
        verdict=verdict.label,
        rationale=verdict.rationale,
        situation=situation,
    )


class LearningProgram(Protocol):
    """What a Learner's owner holds (a `ReasoningBank` does): the LM-backed modules the learner
    calls, read from the owner at each call (a copy an optimizer made is obeyed)."""

    judge: dspy.Module  # (task, trajectory) -> Prediction(verdict=Verdict)
    extractor: dspy.Module  # (task, trajectory, verdict) -> Prediction(lessons=[Lesson, ...])
    distiller: dspy.Module  # (task, trajectories, verdicts) -> Prediction(lessons=[Lesson, ...])


class Learner:
    """Labels, distils, consolidates and stores; records which items were served.

    Args:
        owner: the program whose `judge`, `extractor` and `distiller` modules do the LM work
            (a `ReasoningBank`).
        store: the `MemoryStore` lessons go into.
        consolidation: "append" (the paper's default), "dedup", or a policy object.
        scope: every item written carries this scope.
        trust_outcome: when a trajectory carries a ground-truth outcome (an environment's
            reward), label it with that instead of asking the judge.
        retire_harmful: after recording a task's outcome, retire the served items that are now
            confidently harmful (`memory/ranking.py`).
        quarantine: opt-in write-side defence (`rbdspy.memory.defence.Quarantine`): lessons whose
            text carries instructions, role tags, fence markers or payloads (or whose provenance
            it does not trust) are held on `quarantine.held` and never stored. None (the default)
            stores every lesson.
    """

    def __init__(
        self,
        owner: LearningProgram,
        store: MemoryStore,
        *,
        consolidation: str | ConsolidationPolicy = "append",
        scope: str | None = None,
        trust_outcome: bool = False,
        retire_harmful: bool = False,
        quarantine: Quarantine | None = None,
    ):
        self.owner = owner
        self.quarantine = quarantine
        self.store = store
        self.policy = make_policy(consolidation)
        self.scope = scope
        self.trust_outcome = trust_outcome
        self.retire_harmful = retire_harmful
        # One map per world the store's episodes were played in, updated with each item stored.
        self.maps = WorldMaps(store)

    # ---- labelling ------------------------------------------------------------------------

    def known_verdict(self, trajectory: Trajectory, outcome: bool | None = None) -> Verdict | None:
        """The verdict without a judge: the caller's `outcome`, else the trajectory's own
        outcome when the learner trusts it; None when the judge must decide."""
        if outcome is not None:
            return Verdict.from_outcome(outcome)
        if self.trust_outcome and trajectory.outcome is not None:
            return Verdict.from_outcome(trajectory.outcome)
        return None

    def label_plan(self, trajectory: Trajectory, outcome: bool | None = None) -> Plan:
        """Plan -> Verdict: the known verdict, else the owner's judge."""
        known = self.known_verdict(trajectory, outcome)
        if known is not None:
            return known
        return (yield Call(self.owner.judge, {"task": trajectory.task, "trajectory": trajectory})).verdict

    # ---- distilling and storing -----------------------------------------------------------

    @staticmethod
    def coerce(trajectory: Any, task: str | None = None) -> Trajectory:
        """A Trajectory from any accepted shape; ValueError when it has no task."""
        trajectory = Trajectory.coerce(trajectory, task=task)
        if not trajectory.task:
            raise ValueError("learning needs the task: pass task='...' or a Trajectory whose task is set")
        return trajectory

    def learn_plan(
        self,
        trajectory: Any,
        task: str | None = None,
        outcome: bool | None = None,
        *,
        verdict: Verdict | None = None,
        source: SourceKind | None = None,
        situation: str | None = None,
        lessons: bool = True,
    ) -> Plan:
        """Plan -> Prediction(verdict, memories_added, trajectory): label (unless `verdict` is
        given), extract with the owner's extractor and store. Lessons are written with `source`
        (default: the verdict's label) and, when the bank retrieves by situation, under the
        `situation` they were learned in; an indeterminate verdict writes nothing.

        `lessons=False` (the agent reads no lessons): no judge and no extraction call, only the
        episode's record (`Extractor.records`), labelled when the outcome is known."""
        trajectory = self.coerce(trajectory, task)
        if not lessons:
            return (yield from self._record_plan(trajectory, outcome, verdict, situation))
        if verdict is None:
            verdict = yield from self.label_plan(trajectory, outcome)
        added: list[MemoryItem] = []
        refused = self.quarantine is not None and bool(self.quarantine.refuse(trajectory))
        if verdict.is_determinate and not refused:
            inputs = {"task": trajectory.task, "trajectory": trajectory, "verdict": verdict}
            lessons = (yield Call(self.owner.extractor, inputs)).lessons
            provenance = [provenance_of(trajectory, verdict, situation)]
            added = yield Blocking(self.store_lessons, (lessons, source or verdict.label, provenance, verdict))
        return dspy.Prediction(verdict=verdict, memories_added=added, trajectory=trajectory)

    def _record_plan(
        self, trajectory: Trajectory, outcome: bool | None, verdict: Verdict | None, situation: str | None
    ) -> Plan:
        known = verdict or self.known_verdict(trajectory, outcome)
        verdict = known or Verdict(label="indeterminate", rationale="Not judged: the agent reads no lessons.")
        records = self.owner.extractor.records(trajectory.task, trajectory, verdict)
        provenance = [provenance_of(trajectory, verdict, situation)]
        added = yield Blocking(self.store_lessons, (records, "record", provenance, verdict))
        return dspy.Prediction(verdict=verdict, memories_added=added, trajectory=trajectory)

    def contrast_plan(
        self,
        task: str,
        trajectories: Sequence[Trajectory],
        verdicts: Sequence[Verdict],
        situation: str | None = None,
    ) -> Plan:
        """Plan -> the items written: lessons the owner's distiller draws from contrasting
        several judged attempts at one task, each lesson citing every attempt."""
        if any(not v.is_determinate for v in verdicts):
            raise ValueError("contrast only judged attempts: leave out those whose verdict is indeterminate")
        inputs = {"task": task, "trajectories": list(trajectories), "verdicts": list(verdicts)}
        lessons = (yield Call(self.owner.distiller, inputs)).lessons
        provenance = [provenance_of(t, v, situation) for t, v in zip(trajectories, verdicts, strict=True)]
        # The contrast's lessons are as trusted as its least trusted attempt.
        weakest = next((v for v in verdicts if v.source != "ground_truth"), verdicts[0] if verdicts else None)
        return (yield Blocking(self.store_lessons, (lessons, "contrast", provenance, weakest)))

    def store_lessons(
        self,
        lessons: Sequence[Any],
        source: SourceKind,
        provenance: list[Provenance],
        verdict: Verdict | None = None,
    ) -> list[MemoryItem]:
        """Consolidates lessons into the store, each item carrying `provenance`; with a
        quarantine, only the lessons it lets through (`verdict`: what they were learned under)."""
        if not lessons:
            return []
        items = [
            MemoryItem.from_lesson(lesson, source=source, provenance=list(provenance), scope=self.scope)
            for lesson in lessons
        ]
        if self.quarantine is not None:
            items, _held = self.quarantine.split(items, verdict)
            if not items:
                return []
        stored = self.policy.apply(self.store, items)
        self.maps.note(stored)
        return stored

    # ---- bookkeeping of uses --------------------------------------------------------------

    def record_use_plan(self, used: Sequence[MemoryItem], verdict: Verdict | None = None, task: str = "") -> Plan:
        """Plan -> the ids of items retired by this record (usually none).

        Records, in one store transaction, that `used` were served for `task` and how it ended
        (`verdict`: the environment's outcome when trusted, else the judge's; an indeterminate
        or missing verdict counts the use and teaches nothing). Every task is recorded, served
        items or not: the bank's base rate is what an item's record is compared with."""
        outcome = verdict.is_success if verdict is not None and verdict.is_determinate else None
        ids = [item.id for item in used]
        record = self.store.record_use
        return (yield Blocking(lambda: record(ids, task=task, outcome=outcome, retire_harmful=self.retire_harmful)))

    # ---- run or await ---------------------------------------------------------------------

    def label(self, trajectory: Trajectory, outcome: bool | None = None) -> Verdict:
        return run(self.label_plan(trajectory, outcome))

    async def alabel(self, trajectory: Trajectory, outcome: bool | None = None) -> Verdict:
        return await arun(self.label_plan(trajectory, outcome))

    def learn(self, trajectory: Any, task: str | None = None, outcome: bool | None = None, **options) -> Any:
        return run(self.learn_plan(trajectory, task, outcome, **options))

    async def alearn(self, trajectory: Any, task: str | None = None, outcome: bool | None = None, **options) -> Any:
        return await arun(self.learn_plan(trajectory, task, outcome, **options))

    def learn_contrast(self, task: str, trajectories: Sequence[Trajectory], verdicts: Sequence[Verdict], **options):
        return run(self.contrast_plan(task, trajectories, verdicts, **options))

    async def alearn_contrast(
        self, task: str, trajectories: Sequence[Trajectory], verdicts: Sequence[Verdict], **options
    ):
        return await arun(self.contrast_plan(task, trajectories, verdicts, **options))

    def record_use(self, used: Sequence[MemoryItem], verdict: Verdict | None = None, task: str = "") -> list[str]:
        return run(self.record_use_plan(used, verdict, task))

    async def arecord_use(
        self, used: Sequence[MemoryItem], verdict: Verdict | None = None, task: str = ""
    ) -> list[str]:
        return await arun(self.record_use_plan(used, verdict, task))

    def __repr__(self) -> str:
        return f"Learner(store={self.store!r}, policy={type(self.policy).__name__}, scope={self.scope!r})"
