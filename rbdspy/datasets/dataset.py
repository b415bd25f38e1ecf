"""Labelled trajectories on disk: one JSON record per line.

These files are what the judge and the extractors are compiled against, so every record says
where its label comes from (the environment's score, never an LM) and how the trajectory was
made: a gold path, an agent rollout, or a gold path deliberately broken (truncated, one step
dropped, two adjacent steps swapped) with the exact cause, so a failure can be traced to the
step that made it fail.

`load_records` is strict: a malformed line raises ValueError naming the file and line, because a
silently skipped record skews the label balance a compile run relies on.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from rbdspy.envs.base import Split, actions_of, interleave
from rbdspy.types import Trajectory

Label = Literal["success", "failure"]
ProvenanceKind = Literal["gold", "agent", "gold_truncated", "gold_step_dropped", "gold_step_swapped"]
PERTURBED_KINDS: tuple[ProvenanceKind, ...] = ("gold_truncated", "gold_step_dropped", "gold_step_swapped")


class Cause(BaseModel):
    """What was done to a gold path to make it fail.

    `index` is 0-based into the gold action list: for gold_truncated the number of actions kept
    (the first removed one is `gold[index]`), for gold_step_dropped the dropped step, for
    gold_step_swapped the first of the two swapped steps. `actions` are the gold actions
    involved (the first removed / the dropped / the two swapped, in gold order). `gold_length`
    is the length of the gold path perturbed: the gold actions played up to the win (a
    packaged gold path can go on after it).
    """

    model_config = ConfigDict(extra="forbid")

    index: int = Field(ge=0)
    actions: list[str] = Field(default_factory=list)
    gold_length: int = Field(ge=0)

    def describe(self, kind: ProvenanceKind) -> str:
        quoted = ", ".join(repr(a) for a in self.actions)
        if kind == "gold_truncated":
            return f"gold path cut after {self.index} of {self.gold_length} actions (next would have been {quoted})"
        if kind == "gold_step_dropped":
            return f"gold step {self.index} dropped ({quoted})"
        if kind == "gold_step_swapped":
            return f"gold steps {self.index} and {self.index + 1} swapped ({quoted})"
        return quoted


class LabelledTrajectory(BaseModel):
    """One trajectory with its environment-given label and provenance."""

    model_config = ConfigDict(extra="forbid")

    trajectory: Trajectory
    label: Label
    kind: ProvenanceKind
    cause: Cause | None = None
    env: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    task_type: str = ""
    split: Split

    @model_validator(mode="after")
    def _consistent(self) -> LabelledTrajectory:
        if self.trajectory.outcome is not None and self.trajectory.outcome != (self.label == "success"):
            raise ValueError(f"label {self.label!r} contradicts trajectory.outcome={self.trajectory.outcome}")
        perturbed = self.kind in PERTURBED_KINDS
        if perturbed and self.cause is None:
            raise ValueError(f"kind {self.kind!r} needs a cause (which step was dropped/swapped/truncated)")
        if not perturbed and self.cause is not None:
            raise ValueError(f"kind {self.kind!r} takes no cause; only {', '.join(PERTURBED_KINDS)} do")
        if perturbed and self.label != "failure":
            raise ValueError(f"kind {self.kind!r} records are failures by construction; got label {self.label!r}")
        return self

    @property
    def success(self) -> bool:
        return self.label == "success"

    @property
    def actions(self) -> list[str]:
        """The actions to replay to reproduce this record."""
        return actions_of(self.trajectory)


def write_records(path: str | Path, records: Iterable[LabelledTrajectory], append: bool = False) -> int:
    """Writes records as JSON lines (creating parent folders); returns how many were written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("a" if append else "w", encoding="utf-8") as fh:
        for record in records:
            fh.write(record.model_dump_json() + "\n")
            count += 1
    return count


def iter_records(path: str | Path) -> Iterator[LabelledTrajectory]:
    """Yields the records of a JSONL file; blank lines are skipped. A malformed line raises
    ValueError('<file>:<line>: ...')."""
    path = Path(path)
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{lineno}: not valid JSON ({exc.msg} at column {exc.colno})") from exc
            try:
                yield LabelledTrajectory.model_validate(data)
            except ValidationError as exc:
                problems = "; ".join(
                    f"{'.'.join(str(p) for p in e['loc']) or 'record'}: {e['msg']}" for e in exc.errors()[:3]
                )
                raise ValueError(f"{path}:{lineno}: not a labelled trajectory record ({problems})") from exc


def load_records(path: str | Path) -> list[LabelledTrajectory]:
    """All records of a JSONL file (see `iter_records` for the error contract)."""
    return list(iter_records(path))


def seeding_sample(
    records: Iterable[LabelledTrajectory], task_types: Iterable[str] | None = None, per_type: int = 2
) -> list[LabelledTrajectory]:
    """Train records to seed a bank with: up to `per_type` of each task type (of `task_types`,
    when given), successes and failures taken in turn (a winning path, then a way to fail), in
    file order otherwise. Records of another split are refused: a bank measured on dev or test
    tasks must never have learned from them."""
    if per_type < 1:
        raise ValueError(f"per_type must be at least 1; got {per_type}")
    wanted = set(task_types) if task_types is not None else None
    by_type: dict[str, dict[bool, list[LabelledTrajectory]]] = {}
    for record in records:
        if record.split != "train":
            raise ValueError(f"{record.task_id} is a {record.split} record: seed a bank from train records only")
        if wanted is None or record.task_type in wanted:
            by_type.setdefault(record.task_type, {True: [], False: []})[record.success].append(record)
    chosen: list[LabelledTrajectory] = []
    for groups in by_type.values():
        turns = interleave([groups[True], groups[False]])
        chosen += turns[:per_type]
    return chosen
