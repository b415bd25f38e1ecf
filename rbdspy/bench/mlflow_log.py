"""One MLflow parent run per benchmark run, one nested child run per arm, through
rbdspy.tracking (the project's store and experiment setup).

Logged when the run's records are complete (so an interrupted and resumed run still gives one
tidy parent): the parent holds the settings, the comparisons with no-memory and every output
file; each child holds its arm's summary, the per-task curve (success, cumulative success rate,
LM calls, steps at step = task index) and its JSONL records.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rbdspy import tracking
from rbdspy.bench.arms import ARMS
from rbdspy.bench.records import arm_path


def _metrics(values: dict[str, Any], prefix: str = "") -> dict[str, float]:
    return {
        f"{prefix}{k}": float(v) for k, v in values.items() if isinstance(v, (int, float)) and not isinstance(v, bool)
    }


def _log_arm(
    mlflow, out_dir: Path, arm: str, summary: dict[str, Any], comparison: dict[str, Any] | None, rows: list[dict]
) -> None:
    with mlflow.start_run(run_name=arm, nested=True):
        tracking.log_params({"arm": arm, "description": ARMS[arm].description})
        mlflow.log_metrics(_metrics(summary))
        for tasks, result in (comparison or {}).items():
            if result:
                mlflow.log_metrics(
                    _metrics({k: result[k] for k in ("diff", "low", "high", "p_le_zero")}, f"vs_no_memory_{tasks}_")
                )
        wins = 0
        for n, row in enumerate(sorted(rows, key=lambda r: r["index"]), start=1):
            wins += bool(row["success"])
            mlflow.log_metrics(
                {
                    "task_success": float(row["success"]),
                    "cumulative_success_rate": wins / n,
                    "task_lm_calls": float(row["lm_calls"]),
                    "task_steps": float(row["steps"]),
                },
                step=row["index"],
            )
        if arm_path(out_dir, arm).is_file():
            mlflow.log_artifact(str(arm_path(out_dir, arm)), artifact_path="records")


def log_run(
    out_dir: Path, results: dict[str, Any], records: dict[str, list[dict]], experiment: str = "rbdspy-bench"
) -> str:
    """Logs the parent and the children; returns the parent run id."""
    import mlflow  # heavy: mlflow

    config = results["config"]
    with tracking.run(
        f"bench-{config['env']}-{Path(out_dir).name}",
        experiment=experiment,
        tags={"rbdspy.kind": "bench"},
        autolog=False,
    ) as parent:
        tracking.log_params(
            {
                **{k: v for k, v in config.items() if k != "arms"},
                "arms": ",".join(config["arms"]),
                "out_dir": str(out_dir),
                "command": results["command"],
            }
        )
        for arm, summary in results["arms"].items():
            _log_arm(mlflow, Path(out_dir), arm, summary, results["comparisons"].get(arm), records.get(arm, []))
        for arm, comparison in results["comparisons"].items():
            for tasks, result in comparison.items():
                if result:
                    mlflow.log_metric(f"{arm}.vs_no_memory_{tasks}_diff", result["diff"])
        for arm, summary in results["arms"].items():
            if summary["success_rate_measured"] is not None:
                mlflow.log_metric(f"{arm}.success_rate_measured", summary["success_rate_measured"])
        for name in ("results.md", "learning_curve.png", "success_bars.png", "config.json"):
            if (Path(out_dir) / name).is_file():
                mlflow.log_artifact(str(Path(out_dir) / name))
        return parent.info.run_id
