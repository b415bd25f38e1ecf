"""Lesson truth checked again: the items a run wrote, read back from its banks and checked with the
checker rbdspy has now, so a run's lesson-truth figures follow the checker rather than the version
the run was played with (a long run is played over many sessions).

Only the `truth` of each written item changes; what was played, served and written is untouched.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rbdspy.bench.records import arm_path, read_records, rewrite_records
from rbdspy.envs.capabilities import LessonTruth
from rbdspy.envs.task_sets import open_task_set
from rbdspy.memory.store import MemoryStore


def recheck_truth(out_dir: str | Path, environment: Any = None) -> dict[str, int]:
    """Re-checks the truth of every item the arms of the run in `out_dir` wrote, rewriting each
    record's `truth` rows; returns how many items were checked per arm. `environment` reuses an
    open environment (tests); by default the run's task set is opened as the run opened it.
    Clear errors when the directory holds no run, the run's environment has no facts to check
    against, or an arm's bank is not under the run (a bank kept on a server is not read here)."""
    out_dir = Path(out_dir)
    config_path = out_dir / "config.json"
    if not config_path.is_file():
        raise FileNotFoundError(f"{out_dir} holds no benchmark run (no config.json)")
    config: dict[str, Any] = json.loads(config_path.read_text(encoding="utf-8"))["config"]
    owned = environment is None
    if owned:
        environment = open_task_set(config["env"], config.get("task_set") or "demo", config.get("world_seed"))
    try:
        if not isinstance(environment, LessonTruth):
            raise ValueError(f"environment {config['env']!r} knows no facts to check lessons against")
        check = environment.lesson_truth
        return {arm: n for arm in config["arms"] if (n := _recheck_arm(out_dir, arm, check))}
    finally:
        if owned:
            environment.close()


def item_truth(check, item, task_id: str) -> dict[str, int]:
    """An item's claims checked by the environment's `check`: a record's typed experience as data
    (its content is that data rendered), any other item by its text."""
    if getattr(item, "experience", None) is not None:
        return check(f"{item.title}. {item.description}.", task_id, experience=item.experience)
    return check(f"{item.title}. {item.description}. {item.content}", task_id)


def _recheck_arm(out_dir: Path, arm: str, check) -> int:
    path = arm_path(out_dir, arm)
    records = read_records(path)
    checked = [row for record in records for row in record.get("written") or [] if "truth" in row]
    if not checked:
        return 0
    bank = out_dir / "banks" / arm
    if not (bank / "memory.db").is_file():
        raise FileNotFoundError(f"arm {arm!r} wrote items but its bank is not at {bank}")
    with MemoryStore(bank) as store:
        for record in records:
            for row in record.get("written") or []:
                if "truth" in row and row["id"] in store:  # an item no longer in the bank keeps its row
                    item = store.get(row["id"])
                    row["truth"] = item_truth(check, item, record["task_id"])
    rewrite_records(path, records)
    return len(checked)
