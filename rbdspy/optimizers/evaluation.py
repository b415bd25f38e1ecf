"""Scoring a judge or an extractor on labelled examples with `dspy.Evaluate`, and the numbers
worth logging: the judge's confusion matrix and rates, the extractors' metric parts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import dspy

from rbdspy.optimizers.metrics import combine, judge_report, lesson_parts, metric_for, verdict_label


@dataclass
class EvalReport:
    target: str
    score: float  # mean metric score in [0, 1]
    metrics: dict[str, float]  # flat, ready for mlflow.log_metrics
    rows: list[dict[str, Any]] = field(default_factory=list)  # one per example, JSON-able
    confusion: dict[str, dict[str, int]] | None = None  # judge only


def evaluate(
    program: dspy.Module,
    examples: list[dspy.Example],
    target: str,
    *,
    num_threads: int = 1,
    display_progress: bool = True,
    rubric=None,
) -> EvalReport:
    """Runs `program` on every example (dspy.Evaluate, with a progress bar) and summarises."""
    if not examples:
        raise ValueError("nothing to evaluate: the example list is empty (check --dev / --data and --dev-limit)")
    metric = metric_for(target, rubric=rubric)
    result = dspy.Evaluate(
        devset=examples,
        metric=metric,
        num_threads=num_threads,
        display_progress=display_progress,
        display_table=False,
        provide_traceback=False,
    )(program)
    triples = result.results
    if target == "judge":
        return _judge_summary(triples)
    return _extractor_summary(triples, rubric)


def _judge_summary(triples) -> EvalReport:
    golds = [example.label for example, _, _ in triples]
    predicted = [verdict_label(pred) for _, pred, _ in triples]
    report = judge_report(golds, predicted)
    rows = [
        {
            "task_id": ex.get("task_id"),
            "kind": ex.get("kind"),
            "label": ex.label,
            "verdict": p,
            "rationale": getattr(getattr(pred, "verdict", None), "rationale", ""),
        }
        for (ex, pred, _), p in zip(triples, predicted, strict=True)
    ]
    metrics = {k: float(v) for k, v in report.items() if k not in ("confusion", "n")}
    return EvalReport("judge", report["accuracy"], metrics, rows, report["confusion"])


def _extractor_summary(triples, rubric) -> EvalReport:
    rows, sums, counts = [], {}, {}
    for example, pred, _ in triples:
        parts = lesson_parts(example, pred, rubric)
        score = combine(parts)
        for name, (value, _) in parts.items():
            sums[name] = sums.get(name, 0.0) + value
            counts[name] = counts.get(name, 0) + 1
        lessons = getattr(pred, "lessons", None) or []
        rows.append(
            {
                "task_id": example.get("task_id"),
                "kind": example.get("kind"),
                "label": example.label,
                "score": score,
                "parts": {name: value for name, (value, _) in parts.items()},
                "lessons": [lesson.model_dump() for lesson in lessons],
            }
        )
    n = len(rows)
    metrics = {
        "score": sum(r["score"] for r in rows) / n,
        "lessons_per_example": sum(len(r["lessons"]) for r in rows) / n,
    }
    metrics.update({f"part_{name}": sums[name] / counts[name] for name in sums})
    return EvalReport("extractors", metrics["score"], metrics, rows)
