"""`rbdspy demo`: EnvAgent wrapped in a ReasoningBank on a short stream of real environment tasks.

Each task is played in the environment (TextWorld-Express by default, ScienceWorld on request),
judged by the bank's LM judge, and distilled into memory; the next task retrieves from what the
earlier ones left. The environment's own success flag is printed next to the judge's verdict, so
a user sees where the judge was right; the bank itself learns from the judge (as it would on a
task with no ground truth), unless `trust_outcome` is set.

The task set (small TextWorld-Express games, short ScienceWorld task types, interleaved so that
every task after the first round has a lesson from its own kind to retrieve) lives in
rbdspy/envs/task_sets.py, which `rbdspy bench` plays too; its names are re-exported here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dspy
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from rbdspy.envs.task_sets import DEMO_ENVS, SW_DEMO_TYPES, TWX_DEMO_PARAMS, demo_tasks, open_demo_env

__all__ = ["DEMO_ENVS", "MATTS_MODES", "SW_DEMO_TYPES", "TWX_DEMO_PARAMS", "demo_tasks", "open_demo_env", "run_demo"]

MATTS_MODES = ("none", "parallel", "sequential")


def _row(task_id: str, pred: dspy.Prediction) -> dict:
    trajectory = pred.trajectory  # None only when every MaTTS rollout failed
    row = {
        "task_id": task_id,
        "env_success": bool(trajectory is not None and trajectory.outcome),
        "verdict": pred.verdict.label,
        "steps": int(trajectory.metadata.get("n_steps", 0)) if trajectory is not None else 0,
        "used": [item.title for item in pred.memories_used],
        "added": [f"[{item.source}] {item.title}" for item in pred.memories_added],
    }
    if getattr(pred, "mode", None) == "parallel":  # MaTTS: each rollout's environment outcome
        row["rollout_success"] = [bool(r.trajectory is not None and r.trajectory.outcome) for r in pred.rollouts]
        row["chosen"] = pred.chosen
    elif getattr(pred, "mode", None) == "sequential":  # MaTTS: refinement passes that wrote notes
        row["refinement_notes"] = sum(1 for r in pred.rollouts[1:] if r.notes)
    return row


def _table(rows: list[dict], path: Path, total: int) -> Table:
    table = Table(title=f"rbdspy demo: {len(rows)} task(s), bank at {path} ({total} items)")
    for column in ("#", "task", "env success", "judge", "steps", "memory used", "memory added"):
        table.add_column(column, overflow="fold")
    for i, row in enumerate(rows):
        table.add_row(
            str(i),
            row["task_id"].split("?")[0],
            "yes" if row["env_success"] else "no",
            row["verdict"],
            str(row["steps"]),
            "; ".join(row["used"]) or "-",
            "; ".join(row["added"]) or "-",
        )
    return table


def run_demo(
    lm: dspy.LM,
    embedder: Any,
    path: Path | str,
    env: str = "twx",
    n_tasks: int = 3,
    k: int = 1,
    max_steps: int = 10,
    console: Console | None = None,
    matts: str = "none",
    rollouts: int = 3,
    namespace: str | None = None,
) -> list[dict]:
    """Plays the stream, returns one row per task (also printed, task by task and as a table).

    `matts` "parallel" or "sequential" wraps the bank in MaTTS with `rollouts` rollouts (or
    1 rollout + rollouts-1 refinement passes); "none" plays each task once."""
    from rbdspy.envs import EnvAgent
    from rbdspy.memory import MemoryStore
    from rbdspy.modules import MaTTS, ReasoningBank

    if n_tasks < 1:
        raise ValueError(f"--tasks must be at least 1; got {n_tasks}")
    if max_steps < 1:
        raise ValueError(f"--max-steps must be at least 1; got {max_steps}")
    if matts not in MATTS_MODES:
        raise ValueError(f"--matts must be one of {', '.join(MATTS_MODES)}; got {matts!r}")
    console = console or Console()
    rows: list[dict] = []
    # JSONAdapter: typed outputs go out as a JSON schema, which the embedded engine enforces with
    # constrained decoding, so a small local model's actions and lessons parse.
    with (
        open_demo_env(env) as environment,
        MemoryStore(path, embedder=embedder, namespace=namespace) as store,
        dspy.context(lm=lm, adapter=dspy.JSONAdapter()),
    ):
        agent = EnvAgent(environment, max_steps=max_steps)
        bank = ReasoningBank(agent=agent, store=store, k=k)
        program = bank if matts == "none" else MaTTS(bank, k=rollouts, mode=matts)
        task_ids = demo_tasks(environment, n_tasks)
        progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
        )
        with progress:
            bar = progress.add_task("tasks", total=len(task_ids))
            for task_id in task_ids:
                progress.update(bar, description=f"playing {task_id.split('?')[0]}")
                row = _row(task_id, program(task=agent.describe(task_id), task_id=task_id))
                rows.append(row)
                if "rollout_success" in row:
                    progress.console.print(
                        f"  MaTTS parallel: rollouts succeeded in the environment {sum(row['rollout_success'])}/"
                        f"{len(row['rollout_success'])}, answered with rollout {row['chosen']}"
                    )
                elif "refinement_notes" in row:
                    progress.console.print(
                        f"  MaTTS sequential: {row['refinement_notes']}/{rollouts - 1} refinement passes wrote notes"
                    )
                progress.console.print(
                    f"{task_id.split('?')[0]}: environment says {'success' if row['env_success'] else 'failure'} "
                    f"in {row['steps']} steps, judge says {row['verdict']}; "
                    f"used {len(row['used'])} memories, added {len(row['added'])}"
                )
                progress.advance(bar)
        total = len(store)
    console.print(_table(rows, path, total))
    agreed = sum((r["verdict"] == "success") == r["env_success"] for r in rows if r["verdict"] != "indeterminate")
    console.print(
        f"Environment successes: {sum(r['env_success'] for r in rows)}/{len(rows)}; "
        f"judge agreed with the environment on {agreed}/{len(rows)}."
    )
    console.print(f"Inspect the bank: rbdspy memory list --path {path}")
    return rows
