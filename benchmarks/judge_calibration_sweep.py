"""How many labelled trajectories calibrating the judge needs: N train records of one family in, the
band from `rbdspy.judge.calibration.choose_band`, that family's whole dev file scored.

    python -m benchmarks.judge_calibration_sweep \
        --train docs/bench/judge-views-train-local --dev docs/bench/judge-views-local \
        --write docs/bench/judge-calibration-local

No LM: it reads the P(success) the default probability judge gave every record
(`benchmarks/judge_designs.py --designs probability` runs), which is what `Judge.calibrate` gets
from judging the N examples once; the band is then chosen exactly as `Judge.calibrate` chooses it.
For each family and N in 5, 10, 20, 40 it draws `--seeds` samples of N train records (half
successes, the odd one a success), calibrates on each (with the sample's own seed for the
bootstrap) and reports the mean and spread of balanced accuracy and false-success rate on the
family's dev records, against two references on the same dev records: the band chosen on them
(best balanced accuracy with false successes within the cap: the ceiling no calibration on other
records can pass) and the shipped band.

The calibration's `confidence` (on what share of bootstrap resamples the cap must hold) is chosen
on train records only: the second table calibrates on N train records and scores the family's
other train records, for each confidence tried.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import statistics
from pathlib import Path

from benchmarks.judge_probability_band import load, score
from rbdspy.bench import tables
from rbdspy.judge.calibration import DEFAULT_CONFIDENCE, DEFAULT_MAX_FALSE_SUCCESS, choose_band
from rbdspy.judge.judge import DEFAULT_PROBABILITY_BAND
from rbdspy.judge.probability import DEFAULT_PROBABILITY_VIEWS

SIZES = (5, 10, 20, 40)
CONFIDENCES = (0.5, DEFAULT_CONFIDENCE)


def scored(rows: list[dict]) -> list[tuple[float, bool]]:
    """(P(success), success) of every row the judge scored, as the default judge scores it."""
    out = []
    for row in rows:
        p = score(row, DEFAULT_PROBABILITY_VIEWS)
        if p is not None:
            out.append((p, row["label"] == "success"))
    return out


def rates(pairs: list[tuple[float, bool]], threshold: float) -> tuple[float, float]:
    """(balanced accuracy, false-success rate) of the threshold on `pairs`."""
    successes = [p for p, ok in pairs if ok]
    failures = [p for p, ok in pairs if not ok]
    recall = sum(p >= threshold for p in successes) / len(successes)
    false_success = sum(p >= threshold for p in failures) / len(failures)
    return (recall + 1 - false_success) / 2, false_success


def sample(pairs: list[tuple[float, bool]], n: int, seed: int) -> list[tuple[float, bool]]:
    rng = random.Random(seed)
    successes = [x for x in pairs if x[1]]
    failures = [x for x in pairs if not x[1]]
    return rng.sample(successes, (n + 1) // 2) + rng.sample(failures, n // 2)


def calibrate(pairs: list[tuple[float, bool]], seed: int, confidence: float = DEFAULT_CONFIDENCE) -> float:
    chosen = choose_band([p for p, _ in pairs], [ok for _, ok in pairs], seed=seed, confidence=confidence)
    return chosen.band[1]


def _spread(values: list[float]) -> dict:
    return {
        "mean": statistics.fmean(values),
        "sd": statistics.pstdev(values),
        "min": min(values),
        "max": max(values),
    }


def sweep(train: list[dict], dev: list[dict], seeds: int) -> list[dict]:
    results = []
    for family in sorted({r["family"] for r in dev}):
        pool, target = (
            scored([r for r in train if r["family"] == family]),
            scored([r for r in dev if r["family"] == family]),
        )
        if not pool:
            continue
        ceiling = choose_band([p for p, _ in target], [ok for _, ok in target], bootstrap=0).band[1]
        shipped = rates(target, DEFAULT_PROBABILITY_BAND[1])
        for n, confidence in itertools.product(SIZES, CONFIDENCES[::-1]):  # the default first
            if n > len(pool):
                continue
            draws = range(seeds if n < len(pool) else 1)  # all the train records: one draw
            found = [rates(target, calibrate(sample(pool, n, seed), seed, confidence)) for seed in draws]
            results.append(
                {
                    "family": family,
                    "n": n,
                    "confidence": confidence,
                    "draws": len(found),
                    "dev_records": len(target),
                    "balanced_accuracy": _spread([ba for ba, _ in found]),
                    "false_success_rate": _spread([fs for _, fs in found]),
                    "ceiling": dict(
                        zip(("balanced_accuracy", "false_success_rate"), rates(target, ceiling), strict=True)
                    ),
                    "ceiling_band": ceiling,
                    "shipped": dict(zip(("balanced_accuracy", "false_success_rate"), shipped, strict=True)),
                }
            )
    return results


def confidence_on_train(train: list[dict], seeds: int) -> list[dict]:
    """Calibrate on N train records, score the family's other train records, per confidence."""
    results = []
    for family in sorted({r["family"] for r in train}):
        pool = scored([r for r in train if r["family"] == family])
        for n in SIZES:
            if n >= len(pool):
                continue
            for confidence in CONFIDENCES:
                found = []
                for seed in range(seeds):
                    chosen = sample(pool, n, seed)
                    rest = [x for x in pool if x not in chosen]
                    found.append(rates(rest, calibrate(chosen, seed, confidence)))
                results.append(
                    {
                        "family": family,
                        "n": n,
                        "confidence": confidence,
                        "balanced_accuracy": statistics.fmean(ba for ba, _ in found),
                        "false_success_rate": statistics.fmean(fs for _, fs in found),
                    }
                )
    return results


def _mean_sd(spread: dict) -> str:
    return f"{100 * spread['mean']:.1f}% ± {100 * spread['sd']:.1f}"


def markdown(results: list[dict], selection: list[dict], command: str, seeds: int) -> str:
    rows = [
        [
            r["family"],
            r["n"],
            r["confidence"],
            r["draws"],
            _mean_sd(r["balanced_accuracy"]),
            f"{100 * (r['balanced_accuracy']['mean'] - r['ceiling']['balanced_accuracy']):+.1f}",
            _mean_sd(r["false_success_rate"]),
            tables.pct(r["ceiling"]["balanced_accuracy"], 1),
            tables.pct(r["ceiling"]["false_success_rate"], 1),
            tables.pct(r["shipped"]["balanced_accuracy"], 1),
            tables.pct(r["shipped"]["false_success_rate"], 1),
        ]
        for r in results
    ]
    columns = ("family", "N", "confidence", "draws", "balanced acc (mean ± sd)", "vs ceiling (pp)",
               "false success (mean ± sd)", "ceiling BA", "ceiling FS", "shipped BA", "shipped FS")  # fmt: skip
    choice = [
        [
            r["family"],
            r["n"],
            r["confidence"],
            tables.pct(r["balanced_accuracy"], 1),
            tables.pct(r["false_success_rate"], 1),
        ]
        for r in selection
    ]
    return (
        f"## Calibrating the judge on N labelled trajectories of one family ({seeds} draws per N)\n\n"
        f"{tables.reproduce_line(command)}\n\n"
        f"Band chosen by `choose_band` (cap {DEFAULT_MAX_FALSE_SUCCESS:.0%} false successes, at the default "
        f"confidence {DEFAULT_CONFIDENCE} and at 0.5) on N train records; scored on the family's dev records. "
        "Ceiling: the band chosen on those dev records themselves; shipped: the default band "
        f"{DEFAULT_PROBABILITY_BAND}.\n\n"
        + tables.table(columns, rows, align="lrrr" + "r" * 7)
        + "\n\n### The confidence, chosen on train records (calibrate on N, score the family's other train records)\n\n"
        + tables.table(("family", "N", "confidence", "balanced acc", "false success"), choice, align="lrrrr")
        + "\n"
    )


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", nargs="+", required=True, help="judge_designs.py --out runs on train files")
    parser.add_argument("--dev", nargs="+", required=True, help="judge_designs.py --out runs on dev files")
    parser.add_argument("--seeds", type=int, default=20, help="samples of N train records per N")
    parser.add_argument("--write", default=None, help="also write sweep.md and sweep.json here")
    args = parser.parse_args(argv)
    train = [row for run in args.train for row in load(Path(run))]
    dev = [row for run in args.dev for row in load(Path(run))]
    results = sweep(train, dev, args.seeds)
    selection = confidence_on_train(train, args.seeds)
    command = tables.benchmark_command(
        "judge_calibration_sweep", "--train", *args.train, "--dev", *args.dev, f"--seeds {args.seeds}"
    )
    text = markdown(results, selection, command, args.seeds)
    print(text)
    if args.write:
        out = Path(args.write)
        out.mkdir(parents=True, exist_ok=True)
        (out / "sweep.md").write_text(text)
        (out / "sweep.json").write_text(json.dumps({"sweep": results, "confidence": selection}, indent=1))
    return results


if __name__ == "__main__":
    main()
