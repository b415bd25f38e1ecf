"""A benchmark run's trajectories as labelled records: what the agent did, labelled by the environment.

Every task record keeps the actions the agent played and the environment's verdict, so a run is
also a set of realistic, environment-labelled trajectories of its stream (the agent's own loops
and wrong turns, not a gold path broken on purpose): what the judge is calibrated on
(`rbdspy calibrate --judge`) or measured on (`benchmarks/judge_designs.py`). Each distinct
(task, actions) is replayed from a fresh reset, which also rebuilds the observations the records
do not keep, and kept only when the replay ends as the record did.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rbdspy.agent.episode import stop_summary
from rbdspy.bench.records import arm_path, read_records
from rbdspy.datasets.dataset import LabelledTrajectory
from rbdspy.envs.base import TaskRef, play
from rbdspy.judge.trajectory_text import AGENT_FINAL_ANSWER


def run_arms(run_dir: Path) -> list[str]:
    """The arms whose records `run_dir` holds (arms/<arm>.jsonl)."""
    return sorted(p.stem for p in (Path(run_dir) / "arms").glob("*.jsonl"))


def labelled_from_run(
    run_dir: str | Path,
    environment,
    *,
    arms: Iterable[str] | None = None,
    phase: str | None = None,
    max_steps: int | None = None,
) -> tuple[list[LabelledTrajectory], Counter]:
    """The distinct trajectories of `run_dir`'s arms (all by default; `phase` "build" or
    "measure" keeps that part of the stream), replayed in `environment` and labelled by it.
    With the run's `max_steps`, each ends with the final answer the agent gave (how it stopped,
    `EnvAgent`'s summary), so the judge reads it as the bank's judge read it; without, none.
    Returns the records and a count of what was left out and why."""
    run_dir = Path(run_dir)
    names = list(arms) if arms is not None else run_arms(run_dir)
    seen: set[tuple[str, tuple[str, ...]]] = set()
    out: list[LabelledTrajectory] = []
    skipped: Counter = Counter()
    for arm in names:
        rows = read_records(arm_path(run_dir, arm))
        if not rows:
            raise ValueError(f"{run_dir} has no records of arm {arm!r} (arms there: {', '.join(run_arms(run_dir))})")
        for row in rows:
            if phase is not None and row.get("phase") != phase:
                continue
            key = (row["task_id"], tuple(row.get("actions") or []))
            if key in seen:
                skipped["duplicate"] += 1
                continue
            seen.add(key)
            record = _replayed(environment, row, max_steps)
            if record is None:
                skipped["not_reproduced"] += 1
            else:
                out.append(record)
    return out, skipped


def _replayed(environment, row: dict[str, Any], max_steps: int | None) -> LabelledTrajectory | None:
    actions = list(row.get("actions") or [])
    if not actions:
        return None
    task = TaskRef.parse(row["task_id"])
    trajectory = play(environment, task, actions)
    if bool(trajectory.outcome) != bool(row["success"]):
        return None
    digest = hashlib.sha1(f"{row['task_id']}|{chr(30).join(actions)}".encode()).hexdigest()[:32]
    # The agent stops early only when the environment ends the episode (a win ends it too); its
    # step count is the record's (a step the LM failed to answer counts, and plays no action).
    steps = int(row.get("steps") or len(actions))
    done = bool(trajectory.outcome) or (max_steps is not None and steps < max_steps)
    final = stop_summary(steps, done, max_steps) if max_steps is not None else None
    metadata = {**trajectory.metadata, AGENT_FINAL_ANSWER: final is not None}
    return LabelledTrajectory(
        trajectory=trajectory.model_copy(update={"id": digest, "final_answer": final, "metadata": metadata}),
        label="success" if trajectory.outcome else "failure",
        kind="agent",
        env=environment.name,
        task_id=task.id,
        task_type=task.task_type,
        split=task.split,
    )
