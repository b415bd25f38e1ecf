"""Memory against compute: the measured success of arms whose build tasks were played with k
rollouts each, beside the arm played with one, and what each k cost.

    python -m benchmarks.matts_scaling --point 1=RUN:demo-memory --point 3=RUN3:demo-build-k3 \
        --point 5=RUN3:demo-build-k5 --out DIR

No LM: each point is a bench run's directory and one of its arms (`K=RUN_DIR:ARM`); the points may
come from different runs of the same stream (a k=1 arm already played beside the others). They are
paired on the measured tasks every point played (by task id; a task whose phase differs between the
runs means they are not the same stream, and is refused). Reported per k: wins on those tasks, the
paired difference against the first point with a 95% bootstrap interval, prompt tokens and wall
seconds per build task (where the k rollouts are spent) and per measured task. Writes scaling.md,
scaling.json and scaling.png (success against k, build tokens on a second axis, as the paper plots
MaTTS).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rbdspy.bench.records import arm_path, read_records
from rbdspy.bench.report import headless_pyplot
from rbdspy.bench.stats import paired_bootstrap, summarise
from rbdspy.bench.tables import benchmark_command, reproduce_line, table

MD, JSON, PNG = "scaling.md", "scaling.json", "scaling.png"


def read_point(spec: str) -> tuple[int, Path, str]:
    """`K=RUN_DIR:ARM` -> (k, run directory, arm)."""
    k, sep, rest = spec.partition("=")
    run, colon, arm = rest.rpartition(":")
    if not sep or not colon or not run or not arm or not k.strip().isdigit() or int(k) < 1:
        raise SystemExit(f"--point takes K=RUN_DIR:ARM with K >= 1; got {spec!r}")
    return int(k), Path(run), arm


def load_point(run: Path, arm: str) -> dict[str, dict]:
    """The arm's records by task id; a clear error when the run or the arm is missing."""
    path = arm_path(run, arm)
    rows = read_records(path)
    if not rows:
        raise SystemExit(f"no records of arm {arm!r} in {run} (looked for {path})")
    return {row["task_id"]: row for row in rows}


def scaling(points: list[tuple[int, dict[str, dict]]], seed: int = 0) -> dict[str, Any]:
    """The table's numbers: the first point is the reference the others are paired against."""
    ids = set.intersection(*(set(rows) for _, rows in points))
    for task_id in sorted(ids):
        phases = {rows[task_id]["phase"] for _, rows in points}
        if len(phases) > 1:
            raise SystemExit(f"task {task_id} is built in one run and measured in another: not the same stream")
    measured = sorted(i for i in ids if points[0][1][i]["phase"] == "measure")
    if not measured:
        raise SystemExit("the points share no measured task: were they played on the same stream?")
    built = sorted(i for i in ids if i not in set(measured))
    reference = [float(bool(points[0][1][i]["success"])) for i in measured]
    out = []
    for k, rows in points:
        wins = [float(bool(rows[i]["success"])) for i in measured]
        build = summarise([rows[i] for i in built])
        played = summarise([rows[i] for i in measured])
        out.append(
            {
                "k": k,
                "wins": int(sum(wins)),
                "success_rate": sum(wins) / len(wins),
                "against_first": paired_bootstrap(wins, reference, seed=seed),
                "build_prompt_tokens": build["prompt_tokens_per_task"] if built else None,
                "build_wall_s": build["wall_s_per_task"] if built else None,
                "measured_prompt_tokens": played["prompt_tokens_per_task"],
                "measured_wall_s": played["wall_s_per_task"],
            }
        )
    return {"measured_tasks": len(measured), "build_tasks": len(built), "points": out}


def markdown(result: dict[str, Any], names: list[str], cmd: str) -> str:
    rows = []
    for point, name in zip(result["points"], names, strict=True):
        d = point["against_first"]
        rows.append(
            [
                point["k"],
                name,
                f"{point['wins']}/{result['measured_tasks']}",
                f"{100 * d['diff']:+.1f} pp [{100 * d['low']:+.0f}, {100 * d['high']:+.0f}]",
                f"{point['build_prompt_tokens'] or 0:,.0f}",
                f"{point['build_wall_s'] or 0:,.0f}",
                f"{point['measured_prompt_tokens'] or 0:,.0f}",
            ]
        )
    header = [
        "k",
        "run:arm",
        "measured wins",
        "against the first",
        "build tok/task",
        "build s/task",
        "measured tok/task",
    ]
    return (
        f"# Memory against compute\n\n{result['measured_tasks']} measured tasks played by every point, "
        f"{result['build_tasks']} build tasks.\n\n{table(header, rows, 'rlrrrrr')}\n\n"
        f"![scaling]({PNG})\n\n{reproduce_line(cmd, code=True)}\n"
    )


def scaling_png(result: dict[str, Any], path: Path) -> Path:
    plt = headless_pyplot()
    ks = [p["k"] for p in result["points"]]
    fig, ax = plt.subplots(figsize=(5, 3.6), dpi=110)
    ax.plot(ks, [p["success_rate"] for p in result["points"]], marker="o", label="measured success")
    ax.set_xlabel("rollouts per build task (k)")
    ax.set_ylabel("success rate, measured tasks")
    ax.set_ylim(0, 1.05)
    ax.set_xticks(ks)
    cost = ax.twinx()
    cost.plot(ks, [p["build_prompt_tokens"] or 0 for p in result["points"]], color="grey", linestyle="--", marker="s")
    cost.set_ylabel("prompt tokens per build task", color="grey")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--point", action="append", required=True, help="K=RUN_DIR:ARM (repeat; the first is the reference)"
    )
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    specs = [read_point(spec) for spec in args.point]
    if len(specs) < 2:
        raise SystemExit("give at least two --point: the reference and one k against it")
    result = scaling([(k, load_point(run, arm)) for k, run, arm in specs], seed=args.seed)
    cmd = benchmark_command("matts_scaling", *(f"--point {p}" for p in args.point), f"--out {args.out}")
    result["command"] = cmd
    args.out.mkdir(parents=True, exist_ok=True)
    names = [f"{run}:{arm}" for _, run, arm in specs]
    (args.out / MD).write_text(markdown(result, names, cmd), encoding="utf-8")
    (args.out / JSON).write_text(json.dumps(result, indent=2), encoding="utf-8")
    scaling_png(result, args.out / PNG)
    print(markdown(result, names, cmd))
    return result


if __name__ == "__main__":
    main()
