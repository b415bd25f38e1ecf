"""Does a judge band chosen on some trajectories hold on others? The probability judge's bands,
given, scored on one judged run, each against the first, paired on the same records.

    python -m benchmarks.judge_band_transfer --judged RUN --band shipped=0.26 --band web=DIR/judge.json

No LM: `RUN` is a `benchmarks/judge_designs.py --designs probability --renderers evidence` run,
which recorded the P(success) of every question the judge asked of each record; a band is a number
(one threshold) or a judge's JSON (`rbdspy calibrate --path`: its calibrated band). Reported per
band: balanced accuracy (an abstention counts as wrong), false-success and false-failure rates,
and, against the first band, the paired difference in balanced accuracy with a 95% bootstrap
interval over the records (resampled within each label, so every resample holds both).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from benchmarks.judge_probability_band import load, verdicts
from rbdspy.bench import tables
from rbdspy.judge.probability import DEFAULT_PROBABILITY_VIEWS
from rbdspy.optimizers.metrics import judge_report

RESAMPLES = 10_000


def read_band(spec: str) -> tuple[str, tuple[float, float]]:
    """`NAME=VALUE` (one threshold) or `NAME=PATH` (a judge's JSON holding `band_state.band`)."""
    name, sep, value = spec.partition("=")
    if not sep or not name or not value:
        raise SystemExit(f"--band takes NAME=THRESHOLD or NAME=JUDGE.json; got {spec!r}")
    try:
        threshold = float(value)
        return name, (threshold, threshold)
    except ValueError:
        pass
    path = Path(value)
    if path.is_dir():
        path = path / "judge.json"
    if not path.is_file():
        raise SystemExit(f"--band {name}: {value} is neither a number nor a judge's JSON")
    low, high = json.loads(path.read_text())["band_state"]["band"]
    return name, (float(low), float(high))


def balanced(labels: list[str], verdicts: list[str]) -> float:
    return judge_report(labels, verdicts)["balanced_accuracy"]


def paired_difference(rows: list[dict], a: list[str], b: list[str], seed: int = 0) -> dict:
    """Balanced accuracy of verdicts `a` minus that of `b`, with a 95% interval from resampling
    the records within each label."""
    labels = [r["label"] for r in rows]
    groups = [np.flatnonzero(np.array(labels) == label) for label in ("success", "failure")]
    rng = np.random.default_rng(seed)
    diffs = []
    for _ in range(RESAMPLES):
        picked = np.concatenate([rng.choice(g, size=len(g)) for g in groups if len(g)])
        sample = [labels[i] for i in picked]
        diffs.append(balanced(sample, [a[i] for i in picked]) - balanced(sample, [b[i] for i in picked]))
    low, high = np.percentile(diffs, [2.5, 97.5])
    return {"diff": balanced(labels, a) - balanced(labels, b), "low": float(low), "high": float(high)}


def _points(diff: dict) -> str:
    return "{:+.1f} pp [{:+.1f}, {:+.1f}]".format(*(diff[key] * 100 for key in ("diff", "low", "high")))


def report(rows: list[dict], bands: list[tuple[str, tuple[float, float]]]) -> tuple[str, list[dict]]:
    views = DEFAULT_PROBABILITY_VIEWS
    first = verdicts(rows, views, bands[0][1])
    lines, results = [], []
    for name, band in bands:
        mine = verdicts(rows, views, band)
        rep = judge_report([r["label"] for r in rows], mine)
        diff = paired_difference(rows, mine, first) if name != bands[0][0] else None
        results.append({"band_name": name, "band": band, "n": len(rows), **rep, "vs_first": diff})
        shown = "-" if diff is None else _points(diff)
        lines.append(
            [
                name,
                f"[{band[0]:.3f}, {band[1]:.3f})",
                len(rows),
                *(tables.pct(rep[k], 1) for k in ("balanced_accuracy", "false_success_rate", "false_failure_rate")),
                tables.pct(rep["indeterminate_rate"], 1),
                shown,
            ]
        )
    columns = ("band", "bounds", "n", "balanced acc", "false success", "false failure", "abstain", f"vs {bands[0][0]}")
    return tables.table(columns, lines, align="llrrrrrr"), results


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--judged", required=True, type=Path, help="a judge_designs.py --out run (probability)")
    parser.add_argument("--band", action="append", required=True, help="NAME=THRESHOLD or NAME=JUDGE.json")
    parser.add_argument("--write", type=Path, default=None, help="also write results.md and results.json here")
    args = parser.parse_args(argv)
    bands = [read_band(spec) for spec in args.band]
    rows = load(args.judged)
    text, results = report(rows, bands)
    counts = {label: sum(r["label"] == label for r in rows) for label in ("success", "failure")}
    command = tables.benchmark_command(
        "judge_band_transfer", f"--judged {args.judged}", *(f"--band {spec}" for spec in args.band)
    )
    out = (
        f"## Judge bands on {len(rows)} records ({counts['success']} success, {counts['failure']} failure)\n\n"
        f"{text}\n\n{tables.reproduce_line(command)}\n"
    )
    print(out)
    if args.write:
        args.write.mkdir(parents=True, exist_ok=True)
        (args.write / "results.md").write_text(out)
        (args.write / "results.json").write_text(json.dumps(results, indent=1))
    return out


if __name__ == "__main__":
    main()
