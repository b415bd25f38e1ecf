"""The run's outputs: results.json, results.md (the table), learning_curve.png and
success_bars.png, then the MLflow log (mlflow_log.py).

The table's headline is success on the *measured* tasks (dev/test variations) with the paired
difference to no-memory and its 95% bootstrap interval; success on all tasks (build + measure)
is beside it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from rbdspy.bench.arms import ARMS, BASELINE, REPLAY
from rbdspy.bench.build_calibration import read_calibration
from rbdspy.bench.cost import arm_costs
from rbdspy.bench.memory_report import memory_markdown, memory_summary
from rbdspy.bench.mlflow_log import log_run
from rbdspy.bench.records import arm_path
from rbdspy.bench.selection import selection_view
from rbdspy.bench.stats import compare, summarise
from rbdspy.bench.tables import command, pct, reproduce_line, table
from rbdspy.bench.tasks import BenchTask

RESULTS_JSON = "results.json"
RESULTS_MD = "results.md"
CURVE_PNG = "learning_curve.png"
BARS_PNG = "success_bars.png"


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _ci(result: dict | None) -> str:
    if not result:
        return "-"
    return f"{100 * result['diff']:+.0f} pp [{100 * result['low']:+.0f}, {100 * result['high']:+.0f}]"


COLUMNS = (
    "arm",
    "success (measured)",
    "Δ vs no-memory, measured [95% CI]",
    "success (all)",
    "Δ all [95% CI]",
    "mean score",
    "steps",
    "steps (succ.)",
    "rejected actions",
    "LM calls/task",
    "prompt tok/task",
    "agent prompt tok/task",
    "loop prompt tok/task (% of agent's)",
    "compl. tok/task",
    "memories written",
    "wall s",
)


def _rejected(costs: dict[str, Any]) -> str:
    """The actions the environment refused as a share of those played: "12% (58/480)"."""
    if costs.get("rejected_share") is None:
        return "-"
    return f"{pct(costs['rejected_share'])} ({costs['rejected_actions']:,}/{costs['actions_played']:,})"


def _loop_tokens(costs: dict[str, Any]) -> str:
    """The memory loop's prompt tokens per task and their share of the agent's: "3,391 (26%)"."""
    loop = costs.get("loop_prompt_tokens_per_task")
    return "-" if loop is None else f"{_num(loop, 0)} ({pct(costs.get('loop_share_of_agent'))})"


def markdown_table(results: dict[str, Any]) -> str:
    rows = []
    for arm, s in results["arms"].items():
        cmp = results["comparisons"].get(arm, {})
        costs = (results.get("costs") or {}).get(arm) or {}
        row = [
            arm,
            pct(s["success_rate_measured"]),
            _ci(cmp.get("measured")),
            pct(s["success_rate"]),
            _ci(cmp.get("all")),
            _num(s["mean_score"], 2),
            _num(s["mean_steps"]),
            _num(s["mean_steps_success"]),
            _rejected(costs),
            _num(s["lm_calls_per_task"]),
            _num(s["prompt_tokens_per_task"], 0),
            _num(costs.get("agent_prompt_tokens_per_task"), 0),
            _loop_tokens(costs),
            _num(s["completion_tokens_per_task"], 0),
            str(s["memories_written"]),
            _num(s["wall_s"], 0),
        ]
        rows.append(row)
    return table(COLUMNS, rows)


def console_table(results: dict[str, Any]):
    """The headline columns as a rich Table (the Markdown file has them all)."""
    table = Table(title="rbdspy bench (success = environment verdict; Δ = paired vs no-memory, 95% CI)")
    for column in (
        "arm",
        "success (measured)",
        "Δ measured [95% CI]",
        "success (all)",
        "steps",
        "LM calls/task",
        "tokens/task",
        "memories",
        "wall s",
    ):
        table.add_column(column, overflow="fold", no_wrap=column == "arm")
    for arm, s in results["arms"].items():
        cmp = results["comparisons"].get(arm, {})
        tokens = s["prompt_tokens_per_task"] + s["completion_tokens_per_task"]
        table.add_row(
            arm,
            pct(s["success_rate_measured"]),
            _ci(cmp.get("measured")),
            pct(s["success_rate"]),
            _num(s["mean_steps"]),
            _num(s["lm_calls_per_task"]),
            _num(tokens, 0),
            str(s["memories_written"]),
            _num(s["wall_s"], 0),
        )
    return table


def prompts_note(compiled: str | bool | None) -> str:
    """Which judge/extractor prompts a run's banks loaded, for the report's head: a path (`--compiled
    PATH`), True (a run written before prompts were given by path: the package's shipped ones, which
    it called compiled), or none (the hand-written ones)."""
    if isinstance(compiled, str):
        return f"compiled ({compiled})"
    return "compiled" if compiled else "uncompiled"


def markdown_report(results: dict[str, Any]) -> str:
    c = results["config"]
    n_measured = sum(1 for t in results["stream"] if t["phase"] == "measure")
    head = (
        f"# rbdspy bench: {c['env']}, {c['n_tasks']} tasks ({c['n_tasks'] - n_measured} build on train, "
        f"{n_measured} measured on {c['measure_split']}), max {c['max_steps']} steps, seed {c['seed']}, "
        f"{prompts_note(c.get('compiled'))} judge/extractors, LM `{c['lm'] or '?'}`\n"
    )
    notes = (
        "\nSuccess is the environment's own verdict. Δ is the paired difference to no-memory on the same tasks, "
        "in percentage points, with a 95% paired-bootstrap interval: an interval above 0 is a lift these tasks "
        "support; one that straddles 0 is not distinguishable from no lift. Rejected actions are the agent's "
        "actions the environment refused, of all it played; the memory loop's prompt tokens (judge, extractors) "
        "are per task beside the agent's, with their share of the agent's; \"-\" where the records do not say.\n"
    )
    arms = "\n".join(f"- `{name}`: {ARMS[name].description}" for name in results["arms"])
    memory = memory_markdown(results)
    agreement = results.get("self_agreement")
    if agreement:
        notes += (
            f"\nThe bare agent agreed with its replay (`{REPLAY}`) on {agreement['same_outcome']} of "
            f"{agreement['tasks']} tasks' outcomes ({agreement['same_actions']} with the same actions): differences "
            "smaller than that disagreement are within the run's own noise.\n"
        )
    total = len(results["stream"])
    unfinished = [f"`{a}` {s['n_tasks']} of {total}" for a, s in results["arms"].items() if s["n_tasks"] < total]
    if unfinished:  # a report of a run still in progress (`rbdspy bench --report-only`)
        head += (
            f"\n**Partial run** (continue it with `--resume`): {', '.join(unfinished)} tasks played; each "
            "comparison covers only the tasks both arms have played.\n"
        )
    notes += calibration_notes(results) + selection_notes(results)
    reproduce = reproduce_line(results["command"], code=True)
    return f"{head}\n{markdown_table(results)}\n{notes}\n{arms}\n\n{memory}\n{reproduce}\n"


def selection_notes(results: dict[str, Any]) -> str:
    """The test-time view of each arm that played rollouts, on the measured tasks."""
    lines = []
    for arm, v in (results.get("selection") or {}).items():
        recovered = v["recovered"]
        kept = f"{recovered:.0%} of the oracle's gain kept" if recovered is not None else "the oracle gains nothing"
        if v.get("recovered_interval"):
            low, high = v["recovered_interval"]
            kept += f" [{low:.0%}, {high:.0%}] over its {v['gain_tasks']} tasks"
        versus = f"; selected minus first {_ci(v['selector_gain'])}" if v.get("selector_gain") else ""
        lines.append(
            f"\n`{arm}` at test time, {v['n']} measured tasks: the first rollout won {v['first']}, the selected one "
            f"{v['selected']}, any of the {v['k']} (an oracle selector) {v['oracle']}; {kept}{versus}.\n"
        )
    return "".join(lines)


def calibration_notes(results: dict[str, Any]) -> str:
    """With --calibrate-on-build: each arm's band, and how its judge's labels agreed with the
    environment on the measured tasks (the build tasks were labelled by the environment)."""
    found = results.get("calibration") or {}
    if not found:
        return ""
    lines = ["\nThe judge's band, calibrated on the build tasks (`--calibrate-on-build`):\n"]
    for arm, report in found.items():
        text = report.get("summary") or f"no band chosen ({report.get('why_not')}); the shipped band stayed"
        labels = measured_labels(results, arm)
        lines.append(f"- `{arm}`: {text}.{labels}")
    return "\n".join(lines) + "\n"


def measured_labels(results: dict[str, Any], arm: str) -> str:
    labels = (results.get("memory") or {}).get(arm) or {}
    measured = labels.get("labels_measured")
    if not measured or not measured["labelled"]:
        return ""
    return (
        f" On the measured tasks its labels agreed with the environment on {measured['agree']} of "
        f"{measured['labelled']} (false success {measured['false_success']}, false failure "
        f"{measured['false_failure']}, indeterminate {measured['indeterminate']})."
    )


def headless_pyplot():
    """matplotlib's pyplot drawing to files only (no display), imported when first drawn."""
    import matplotlib  # heavy: matplotlib

    matplotlib.use("Agg")  # no display: CLIs, CI and notebooks alike
    import matplotlib.pyplot as plt  # heavy: matplotlib

    return plt


def learning_curve_png(records: dict[str, list[dict]], stream: list[BenchTask], path: Path) -> Path:
    """Cumulative success rate against task index, one line per arm, with the build/measure
    boundary marked."""
    plt = headless_pyplot()
    fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
    for arm, rows in records.items():
        rows = sorted(rows, key=lambda r: r["index"])
        xs, ys, wins = [], [], 0
        for n, row in enumerate(rows, start=1):
            wins += bool(row["success"])
            xs.append(row["index"])
            ys.append(wins / n)
        ax.plot(xs, ys, marker="o", markersize=3, label=arm, linestyle="--" if arm == BASELINE else "-")
    boundary = next((t.index for t in stream if t.phase == "measure"), None)
    if boundary:
        ax.axvline(boundary - 0.5, color="grey", linewidth=0.8)
        ax.text(boundary - 0.4, 1.02, "measured →", fontsize=8, color="grey", va="bottom")
    ax.set_xlabel("task index (stream order)")
    ax.set_ylabel("cumulative success rate")
    ax.set_ylim(-0.02, 1.08)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def success_bars_png(results: dict[str, Any], path: Path) -> Path:
    """Success rate per arm on the measured and on all tasks."""
    plt = headless_pyplot()
    arms = list(results["arms"])
    measured = [results["arms"][a]["success_rate_measured"] or 0.0 for a in arms]
    overall = [results["arms"][a]["success_rate"] or 0.0 for a in arms]
    fig, ax = plt.subplots(figsize=(max(5, 1.1 * len(arms) + 2), 4), dpi=110)
    xs = range(len(arms))
    ax.bar([x - 0.2 for x in xs], measured, width=0.4, label="measured (dev/test)")
    ax.bar([x + 0.2 for x in xs], overall, width=0.4, label="all tasks", alpha=0.6)
    ax.set_xticks(list(xs), arms, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("success rate")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def reproduce_command(config: Mapping[str, Any]) -> str:
    """The `rbdspy bench` line that plays the run whose config.json "config" is `config` again
    (`rbdspy.bench.settings.run_record`; a key an older run lacks is at its default)."""
    parts = [
        f"--env {config['env']}",
        f"--tasks {config['n_tasks']}",
        f"--arms {','.join(config['arms'])}",
        f"--seed {config['seed']}",
        f"--max-steps {config['max_steps']}",
    ]
    compiled = config.get("compiled")
    if isinstance(compiled, str):  # True (an older run's shipped prompts) has no flag: none are shipped
        parts.append(f"--compiled {compiled}")
    if config.get("task_set", "demo") != "demo":
        parts.append(f"--task-set {config['task_set']}")
    if config.get("build_fraction", 0.5) != 0.5:
        parts.append(f"--build-fraction {config['build_fraction']:g}")
    if config.get("world_seed") is not None:
        parts.append(f"--world-seed {config['world_seed']}")
    if config.get("agent", "auto") != "auto":
        parts.append(f"--agent {config['agent']}")
    if config.get("calibrate_on_build", False):
        parts.append("--calibrate-on-build")
    if any(ARMS[a].seeded for a in config["arms"]):
        parts += [f"--seed-from {p}" for p in config.get("seed_from") or []]
        parts.append(f"--seed-per-type {config.get('seed_per_type', 2)}")
    if config.get("lm"):
        parts.append(f"--lm {config['lm']}")
    if config.get("embedder"):
        parts.append(f"--embedder {config['embedder']}")
    return command("rbdspy bench", *parts)


def build_results(
    config: Mapping[str, Any],
    stream: list[BenchTask],
    records: dict[str, list[dict]],
    n_resamples: int,
    out_dir: Path | None = None,
) -> dict[str, Any]:
    """results.json: `config` (config.json's record of the run's settings), the stream, and what
    the records say of each arm and of each arm against the baseline."""
    return {
        "config": dict(config),
        "out_dir": str(out_dir) if out_dir is not None else None,
        "command": reproduce_command(config),
        "stream": [t.to_dict() for t in stream],
        "arms": {arm: summarise(rows) for arm, rows in records.items()},
        "costs": {arm: arm_costs(rows) for arm, rows in records.items()},
        "comparisons": compare(records, BASELINE, seed=config["seed"], n_resamples=n_resamples),
        "memory": {arm: memory_summary(rows) for arm, rows in records.items()},
        "calibration": {
            arm: found
            for arm in records
            if out_dir is not None and (found := read_calibration(arm_path(out_dir, arm))) is not None
        },
        "self_agreement": self_agreement(records),
        # MaTTS parallel's test-time view: the selected rollout against the first and any that won.
        "selection": {
            arm: view
            for arm, rows in records.items()
            if (view := selection_view(rows, n_resamples=n_resamples, seed=config["seed"])) is not None
        },
    }


def self_agreement(records: dict[str, list[dict]]) -> dict[str, int] | None:
    """How often the bare agent agrees with its own replay (arm `no-memory-replay`, played in
    another session or on another machine) on the tasks both played: the noise floor a paired
    difference is read against. None without a replay."""
    base = {r["index"]: r for r in records.get(BASELINE, [])}
    replay = {r["index"]: r for r in records.get(REPLAY, [])}
    both = sorted(set(base) & set(replay))
    if not both:
        return None
    return {
        "tasks": len(both),
        "same_outcome": sum(base[i]["success"] == replay[i]["success"] for i in both),
        "same_actions": sum(base[i].get("actions") == replay[i].get("actions") for i in both),
    }


def write_reports(
    out_dir: Path,
    config: Mapping[str, Any],
    stream: list[BenchTask],
    records: dict[str, list[dict]],
    *,
    console: Console,
    mlflow: bool = True,
    experiment: str = "rbdspy-bench",
    n_resamples: int = 10_000,
) -> dict[str, Any]:
    """Writes every output file, prints the table, logs to MLflow; returns the results. `config`
    is the run's record of its settings (`rbdspy.bench.settings.run_record`)."""
    results = build_results(config, stream, records, n_resamples, out_dir)
    learning_curve_png(records, stream, out_dir / CURVE_PNG)
    success_bars_png(results, out_dir / BARS_PNG)
    (out_dir / RESULTS_MD).write_text(markdown_report(results), encoding="utf-8")
    if mlflow:
        results["mlflow_run_id"] = log_run(out_dir, results, records, experiment=experiment)
    (out_dir / RESULTS_JSON).write_text(json.dumps(results, indent=2), encoding="utf-8")
    console.print(console_table(results))
    console.print(
        f"Results in {out_dir} ({RESULTS_MD}, {RESULTS_JSON}, {CURVE_PNG}, {BARS_PNG}). "
        + reproduce_line(results["command"])
    )
    return results
