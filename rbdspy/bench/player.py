"""Plays one arm of the benchmark: its bank, its program, one record per finished task.

An `ArmPlayer` holds what an arm needs between tasks (its records, its bank, its program), so
a run can play the stream task by task, every arm on task i before any arm on task i+1: on a
shared or changing machine (greedy decoding flips with a CPU's numerics) every arm then plays a
task under the same conditions, and a resumed run goes on the same way. `run_arm` plays one arm
alone (what a Ray worker does).

Resuming: records already on disk are skipped, and anything the arm's bank wrote during a task
that was interrupted before its record was appended is removed first (items are appended in
order and each record notes the bank's size), so the resumed arm continues from exactly the bank
its finished tasks left.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import dspy
from rich.progress import Progress

from rbdspy.agent.user_react import STOPPED
from rbdspy.bench.agent_variants import agent_options, make_agent
from rbdspy.bench.arm_job import ArmJob
from rbdspy.bench.arms import ARMS, BuildContext
from rbdspy.bench.build_calibration import SCORE_FIELD, BuildCalibration, calibratable, calibration_path
from rbdspy.bench.cost import AGENT, LOOP, lm_role
from rbdspy.bench.records import (
    REJECTED_FIELD,
    append_record,
    arm_path,
    read_records,
    rejected_actions,
    rewrite_records,
)
from rbdspy.bench.tasks import BenchTask
from rbdspy.bench.truth_recheck import item_truth
from rbdspy.core.roles import AGENT_ROLE
from rbdspy.envs.capabilities import LessonTruth
from rbdspy.lm.usage import LmUsage
from rbdspy.memory import MemoryStore

SPEND_FIELDS = ("calls", "prompt_tokens", "completion_tokens")


def task_record(
    task: BenchTask,
    arm: str,
    pred: dspy.Prediction | None,
    usage: LmUsage,
    wall_s: float,
    bank_size: int,
    error: str | None = None,
) -> dict[str, Any]:
    """What the tables are computed from: environment ground truth, cost, memory traffic."""
    trajectory = getattr(pred, "trajectory", None) if pred is not None else None
    meta = trajectory.metadata if trajectory is not None else {}
    steps = int(meta.get("n_steps", 0))
    rollouts = getattr(pred, "rollouts", None) if pred is not None else None
    env_actions = (
        sum(int(r.trajectory.metadata.get("n_steps", 0)) for r in rollouts if r.trajectory is not None)
        if rollouts
        else steps
    )
    verdict = getattr(pred, "verdict", None) if pred is not None else None
    max_score = float(meta.get("max_score") or 1.0)
    return {
        **task.to_dict(),
        "arm": arm,
        "success": bool(trajectory is not None and trajectory.outcome),
        "score": float(meta.get("final_score") or 0.0) / max_score,
        "steps": steps,
        # What the agent did (the best rollout's actions under MaTTS): why a task was won or lost.
        "actions": [step.content for step in trajectory.steps if step.role == AGENT_ROLE]
        if trajectory is not None
        else [],
        # The step memory offered before each action (None where it offered none): why an action
        # was played, beside the actions.
        "suggested": [step.metadata.get("suggested") for step in trajectory.steps if step.role == AGENT_ROLE]
        if trajectory is not None
        else [],
        # Why the map offered each of those steps: its target, where, and the past tasks it came from.
        "suggested_why": [step.metadata.get("suggested_why") for step in trajectory.steps if step.role == AGENT_ROLE]
        if trajectory is not None
        else [],
        # Which actions the agent's scan played (the answer its check liked best in view, no LM
        # call for an action), and every answer check with its P(yes): why an answer was given.
        "scanned": [bool(step.metadata.get("scanned")) for step in trajectory.steps if step.role == AGENT_ROLE]
        if trajectory is not None
        else [],
        "answer_checks": list(meta.get("answer_checks") or []),
        "env_actions": env_actions,
        # Under MaTTS, each rollout's outcome (the environment's) and which one the selector took:
        # the test-time view (the selected rollout against the first and against any that won).
        **(
            {
                "rollouts": [bool(r.trajectory is not None and r.trajectory.outcome) for r in rollouts],
                "chosen": getattr(pred, "chosen", None),
            }
            if rollouts and getattr(pred, "mode", None) == "parallel"  # sequential passes refine one rollout
            else {}
        ),
        REJECTED_FIELD: rejected_actions(pred),
        "verdict": verdict.label if verdict is not None else None,
        "memories_used": len(getattr(pred, "memories_used", None) or []),
        "memories_added": len(getattr(pred, "memories_added", None) or []),
        # Why each item was served (similarity, rank score, learned value) and what was written.
        "retrieved": list(getattr(pred, "retrieval", None) or []),
        "written": [
            {"id": item.id, "title": item.title, "source": item.source}
            for item in (getattr(pred, "memories_added", None) or [])
        ],
        "lm_calls": usage.calls,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        # The agent's own spend, and the memory loop's (judge, extractors, distiller...).
        **{f"{role}_{name}": getattr(usage.by_kind[role], name) for role in (AGENT, LOOP) for name in SPEND_FIELDS},
        "wall_s": round(wall_s, 3),
        "bank_size": bank_size,
        "error": error,
        # Why an episode ended early though the run went on (a user's agent whose LM call failed).
        **({STOPPED: meta[STOPPED]} if meta.get(STOPPED) else {}),
    }


def _roll_back(store, records: list[dict[str, Any]], name: str) -> int:
    """Removes items written after the last finished task (an interrupted task's writes). A bank
    holding fewer items than the records say it held is refused: resuming would play on with
    memory the records say it had."""
    if store is None:
        return 0
    keep = records[-1]["bank_size"] if records else 0
    held = len(store)
    if held < keep:
        raise ValueError(
            f"arm {name!r}: its records say its bank held {keep} items after task {records[-1]['index']}, "
            f"but {store.path} holds {held}. Items are missing (a memory.db copied or committed without its "
            "memory.db-wal file loses what was not folded in yet): restore the bank, or play the arm afresh "
            "(remove its records and bank)."
        )
    extra = store.list()[keep:]
    return store.remove([item.id for item in extra]) if extra else 0


def _seed(program, seed_records: list, out_dir: Path, name: str, progress: Progress | None, bar) -> None:
    """Seeds an arm's bank from train records and writes what it cost to arms/<arm>.seed.json."""
    if not seed_records:
        raise ValueError(f"arm {name!r} is seeded, but no train records were given to seed it (--seed-from)")
    if progress is not None:
        progress.update(bar, description=f"{name}: seeding from {len(seed_records)} train records")
    start = time.perf_counter()
    with LmUsage(classify=lm_role) as usage:
        items = program.learn_from(seed_records)
    report = {
        "records": [r.task_id for r in seed_records],
        "items": [{"id": i.id, "title": i.title, "source": i.source} for i in items],
        "lm_calls": usage.calls,
        "prompt_tokens": usage.prompt_tokens,
        "wall_s": round(time.perf_counter() - start, 3),
    }
    path = arm_path(out_dir, name).with_suffix(".seed.json")
    path.parent.mkdir(parents=True, exist_ok=True)  # the arm may be the first (or, on Ray, the only) one to write
    path.write_text(json.dumps(report, indent=2), encoding="utf-8")


def arm_namespace(out_dir: Path, name: str) -> str:
    """The namespace of arm `name`'s bank on a PostgreSQL server: one per run directory and arm."""
    run = re.sub(r"[^A-Za-z0-9_.:@-]+", "-", Path(out_dir).resolve().name).strip("-") or "run"
    return f"bench/{run}/{name}"[:128]


class ArmPlayer:
    """Plays `job` (an `ArmJob`: an arm, its stream, its run directory and the run's settings) on
    `environment`: `open()` prepares its bank and program (rolling back an interrupted task's
    writes, seeding a seeded arm's fresh bank), `play(task)` plays one task and appends its
    record, `close()` closes the bank. Tasks already recorded are in `done`."""

    def __init__(self, job: ArmJob, environment, embedder):
        settings = job.settings
        self.job, self.settings = job, settings
        self.agent_options = agent_options(settings.agent)
        self.calibration: BuildCalibration | None = None
        self.name, self.stream, self.environment = job.name, job.stream, environment
        self.out_dir, self.embedder = Path(job.out_dir), embedder
        self.arm = ARMS[job.name]
        self.path = arm_path(self.out_dir, job.name)
        self.records = read_records(self.path)
        self.done = {r["index"] for r in self.records}
        self.store = self.program = self.agent = None
        self.progress, self.bar = None, None

    def todo(self) -> list[BenchTask]:
        return [t for t in self.stream if t.index not in self.done]

    def open(self, progress: Progress | None = None) -> ArmPlayer:
        self.progress = progress
        self.bar = progress.add_task(self.name, total=len(self.stream), completed=len(self.done)) if progress else None
        if not self.todo():
            return self
        if self.path.is_file():
            rewrite_records(self.path, self.records)
        if not self.arm.uses_memory:
            self.store = None
        elif self.settings.bank_url:
            namespace = arm_namespace(self.out_dir, self.name)
            self.store = MemoryStore(self.settings.bank_url, embedder=self.embedder, namespace=namespace)
        else:
            self.store = MemoryStore(self.out_dir / "banks" / self.name, embedder=self.embedder)
        _roll_back(self.store, self.records, self.name)
        self.agent = make_agent(self.settings.agent, self.environment, self.settings.max_steps)
        compiled = self.settings.compiled
        context = BuildContext(agent=self.agent, store=self.store, compiled=compiled, stream=tuple(self.stream))
        self.program = self.arm.build(context)
        if self.settings.calibrate_on_build and calibratable(self.program):
            self.calibration = BuildCalibration(self.program, calibration_path(self.path))
        if self.arm.seeded and not self.records:  # a fresh (or rolled back to empty) bank: seed it first
            _seed(self.program, self.job.seed_records or [], self.out_dir, self.name, progress, self.bar)
        return self

    def play(self, task: BenchTask) -> dict[str, Any]:
        """Plays `task` and appends its record (a task that raises is recorded as a failure)."""
        if self.program is None:
            raise RuntimeError(f"arm {self.name!r}: open() before play()")
        if self.progress is not None:
            self.progress.update(self.bar, description=f"{self.name}: {task.task_id.split('?')[0]}")
        pred, error, score = None, None, None
        if self.calibration is not None:
            self.calibration.before(task, self.records)
        start = time.perf_counter()
        with LmUsage(classify=lm_role) as usage:
            try:
                pred = self.program(task=self.agent.describe(task.task_id), task_id=task.task_id)
                if self.calibration is not None and task.phase == "build":
                    score = self.calibration.score(pred)
            except Exception as exc:  # a broken task is recorded as a failure, the run goes on
                error = f"{type(exc).__name__}: {exc}"[:500]
        size = len(self.store) if self.store is not None else 0
        record = task_record(task, self.name, pred, usage, time.perf_counter() - start, size, error)
        if self.calibration is not None and task.phase == "build":
            record[SCORE_FIELD] = score
        self._check_truth(record, pred, task)
        append_record(self.path, record)
        if self.store is not None:
            self.store.checkpoint()  # the bank file alone now holds what this record says it held
        self.records.append(record)
        self.done.add(task.index)
        if self.progress is not None:
            self.progress.advance(self.bar)
        return record

    def _check_truth(self, record: dict[str, Any], pred, task: BenchTask) -> None:
        """On a world that knows its facts, each written item's claims about it and how many are true."""
        if not isinstance(self.environment, LessonTruth) or pred is None:
            return
        for row, item in zip(record["written"], getattr(pred, "memories_added", None) or [], strict=False):
            row["truth"] = item_truth(self.environment.lesson_truth, item, task.task_id)

    def close(self) -> None:
        store, self.store = self.store, None
        if store is not None:
            store.close()
        if self.progress is not None:
            self.progress.update(self.bar, description=self.name)

    def __enter__(self) -> ArmPlayer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def run_arm(job: ArmJob, environment, embedder, progress: Progress | None = None) -> list[dict[str, Any]]:
    """Plays every task of `job`'s stream not yet recorded for its arm; returns all its records.
    The arm's bank is banks/<name>/ under the run directory, or its namespace on the PostgreSQL
    server of the settings' `bank_url`."""
    player = ArmPlayer(job, environment, embedder)
    with player.open(progress):
        for task in player.todo():
            player.play(task)
    return player.records


def play_task_by_task(players: list[ArmPlayer], progress: Progress | None = None) -> dict[str, list[dict[str, Any]]]:
    """Every arm on task i before any arm on task i+1 (arms in the order given)."""
    opened: list[ArmPlayer] = []
    try:
        for player in players:
            opened.append(player.open(progress))
        indices = sorted({t.index for p in players for t in p.todo()})
        by_index = {t.index: t for p in players for t in p.stream}
        for index in indices:
            for player in players:
                if index not in player.done:
                    player.play(by_index[index])
    finally:
        for player in opened:
            player.close()
    return {player.name: player.records for player in players}
