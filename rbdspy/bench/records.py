"""The per-task records of a run on disk: one JSONL file per arm, one line per finished task.

A line is appended (and fsynced) as soon as a task finishes, so an interrupted run loses at most
the task in flight, and a rerun with --resume skips every index already on disk.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def arm_path(out_dir: Path, arm: str) -> Path:
    return Path(out_dir) / "arms" / f"{arm}.jsonl"


def read_records(path: Path) -> list[dict[str, Any]]:
    """The records in `path`, in file order; a last line cut short by a crash is ignored."""
    if not Path(path).is_file():
        return []
    rows = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            break  # a torn final write: that task is replayed
    return rows


def append_record(path: Path, record: dict[str, Any]) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, default=str) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def rewrite_records(path: Path, records: list[dict[str, Any]]) -> None:
    """Rewrites `path` with `records` only (drops a torn last line before appending to it)."""
    path = Path(path)
    tmp = path.with_suffix(".jsonl.tmp")
    tmp.write_text("".join(json.dumps(r, default=str) + "\n" for r in records), encoding="utf-8")
    os.replace(tmp, path)


# A record's count of the actions the environment refused ("You can't see any such thing",
# "No known action"): absent from records written before it was kept.
REJECTED_FIELD = "invalid_actions"
# The gold paths a ScienceWorld run's controls served, pinned beside its records: the simulator's
# oracle can answer differently in another process, and a resumed run must serve the same paths.
GOLD_FILE = "gold.json"


def rejected_actions(pred: Any) -> int | None:
    """How many of a task's actions the environment refused, over every rollout the task played
    (as its `env_actions` counts them); None when its trajectories do not say. For
    `task_record`: `{REJECTED_FIELD: rejected_actions(pred)}`."""
    counts = [t.metadata.get(REJECTED_FIELD) for t in _played(pred)]
    if not counts or any(c is None for c in counts):
        return None
    return sum(int(c) for c in counts)


def _played(pred: Any) -> list:
    """The trajectories a task's prediction played: each rollout's under MaTTS, else its one."""
    if pred is None:
        return []
    rollouts = getattr(pred, "rollouts", None)
    if rollouts:
        return [r.trajectory for r in rollouts if getattr(r, "trajectory", None) is not None]
    trajectory = getattr(pred, "trajectory", None)
    return [trajectory] if trajectory is not None else []
