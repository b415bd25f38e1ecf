"""`rbdspy demo`: a short stream of small reasoning tasks through a DSPy agent wrapped in a
ReasoningBank, showing what the bank judged, learned and reused.

The tasks come in two families (unit conversions, letter counting) so lessons from early tasks
are retrievable for later ones. Each task carries its true answer, used only to print whether
the judge was right; the judge never sees it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import dspy
from rich.console import Console
from rich.progress import track
from rich.table import Table


@dataclass(frozen=True)
class DemoTask:
    task: str
    answer: str


DEMO_TASKS = (
    DemoTask("How many inches are in 3 feet? Answer with a number only.", "36"),
    DemoTask("How many times does the letter r appear in the word strawberry? Answer with a number only.", "3"),
    DemoTask("How many minutes are in 2.5 hours? Answer with a number only.", "150"),
    DemoTask("How many times does the letter s appear in the word mississippi? Answer with a number only.", "4"),
    DemoTask("How many centimeters are in 4 meters? Answer with a number only.", "400"),
    DemoTask("How many times does the letter e appear in the word excellence? Answer with a number only.", "4"),
)


class DemoAgent(dspy.Signature):
    """Solve the task. The memory block holds lessons from earlier tasks: use them when they
    apply, ignore them when they do not."""

    task: str = dspy.InputField()
    memory: str = dspy.InputField(desc="Lessons from past tasks (reference data, may be empty)")
    answer: str = dspy.OutputField()


def is_correct(answer: str, expected: str) -> bool:
    numbers = re.findall(r"-?\d+(?:\.\d+)?", answer or "")
    return bool(numbers) and float(numbers[0]) == float(expected)


def run_demo(lm: dspy.LM, embedder, path: Path, n_tasks: int = len(DEMO_TASKS), k: int = 1, console: Console | None = None) -> list[dict]:
    """Runs the stream and returns one row per task (also printed as a table)."""
    from rbdspy.memory import MemoryStore
    from rbdspy.modules import ReasoningBank

    console = console or Console()
    if not 1 <= n_tasks <= len(DEMO_TASKS):
        raise ValueError(f"--tasks must be between 1 and {len(DEMO_TASKS)}; got {n_tasks}")
    rows = []
    # JSONAdapter: typed outputs go out as a JSON schema, which the embedded engine enforces with
    # constrained decoding, so a small local model's lessons parse.
    with MemoryStore(path, embedder=embedder) as store, dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        bank = ReasoningBank(agent=dspy.ChainOfThought(DemoAgent), store=store, k=k)
        for spec in track(DEMO_TASKS[:n_tasks], description="tasks", console=console):
            pred = bank(task=spec.task)
            rows.append({
                "task": spec.task,
                "answer": str(pred.answer),
                "correct": is_correct(str(pred.answer), spec.answer),
                "verdict": pred.verdict.label,
                "used": [item.title for item in pred.memories_used],
                "added": [item.title for item in pred.memories_added],
            })
        total = len(store)
    table = Table(title=f"rbdspy demo: {n_tasks} task(s), bank at {path} ({total} items)")
    for column in ("#", "task", "answer", "correct", "judge", "memory used", "memory added"):
        table.add_column(column, overflow="fold")
    for i, row in enumerate(rows):
        table.add_row(str(i), row["task"].split("?")[0] + "?", row["answer"][:12], "yes" if row["correct"] else "no", row["verdict"],
                      "; ".join(row["used"]) or "-", "; ".join(row["added"]) or "-")
    console.print(table)
    console.print(f"Inspect the bank: rbdspy memory list --path {path}")
    return rows
