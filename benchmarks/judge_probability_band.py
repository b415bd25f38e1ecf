"""The probability judge's threshold and abstention band: chosen on train records, reported on dev.

    python -m benchmarks.judge_probability_band \
        --train docs/bench/judge-views-train-local --dev docs/bench/judge-views-local

(docs/bench/judge-probability-train-local and judge-designs-local hold the judge before the
windows and the action list: last steps + progress.)

No LM: it reads the P(success) that `benchmarks/judge_designs.py --designs probability` recorded
for each question the judge asked of every trajectory, scores them as the judge does
(`score_log_odds`) for each combination of score terms, and picks the band (low, high) that gives
the best balanced accuracy on one family's *train* records with at most 10% abstentions (ties:
fewer false successes, then the narrower band, then the middle of the bands still tied). It reports that band
on the *dev* records of the other family (out of distribution) and of the same one, and the band
chosen on both families' train records (the shipped default) on every dev family. Balanced
accuracy counts an abstention as wrong, as judge_designs.py does; AUC (how well the score ranks a
family's records, whatever the threshold) shows how much is lost to the threshold alone, and
"best on dev" the balanced accuracy of the band chosen on the evaluated dev records themselves: a
ceiling no band chosen elsewhere can pass, so a goal above it needs a judge that ranks better,
not a better threshold. "Paired" is the AUC within one task: how often a success scores above a
failure of the same task (the dev files pair each won playthrough with perturbed copies of it),
so a judge whose scores only sit at different heights for different tasks scores high there and
one that cannot tell a success from its own perturbation does not.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from rbdspy.bench import tables
from rbdspy.judge.probability import DEFAULT_PROBABILITY_VIEWS, score_log_odds
from rbdspy.optimizers.metrics import judge_report

FAMILIES = ("scienceworld", "twx")
# Score terms (see rbdspy/judge/probability.py), each computed from the recorded answers;
# a run records the questions of the views it was made with, and combinations it lacks are skipped.
VIEWS = {
    "last-action + last-steps + recent-steps + actions": DEFAULT_PROBABILITY_VIEWS,
    "last-action + actions": ("last-action", "actions"),
    "last-action": ("last-action",),
    "last-steps": ("last-steps",),
    "recent-steps": ("recent-steps",),
    "actions": ("actions",),
    "last-steps + progress": ("last-steps", "progress"),
}
GRID = [round(0.02 * i, 2) for i in range(1, 50)]  # 0.02 .. 0.98
MAX_ABSTENTION = 0.10


def load(out: Path) -> list[dict]:
    """The records of the run's one probability arm (hand-written or compiled)."""
    paths = sorted((out / "records").glob("probability+*.jsonl"))
    if len(paths) != 1:
        found = ", ".join(p.name for p in paths) or "none"
        raise SystemExit(
            f"need exactly one probability arm's records in {out / 'records'} (found {found}): "
            "run benchmarks/judge_designs.py --designs probability --renderers evidence"
        )
    return [json.loads(line) for line in paths[0].read_text().splitlines() if line.strip()]


def needed(views: tuple[str, ...]) -> set[str]:
    """The questions whose answers the score of `views` reads."""
    return set().union(*({"last-steps", "before-last"} if view == "progress" else {view} for view in views))


def score(row: dict, views: tuple[str, ...]) -> float | None:
    """The judge's score from the recorded answers; as in the judge, a question a trajectory was
    not asked (the action list of a one-action trajectory) counts nothing. None when nothing the
    score reads was answered (a failed call)."""
    ps = row.get("probabilities") or {}
    if not needed(views) & set(ps):
        return None
    return 1 / (1 + math.exp(-score_log_odds(ps, views)))


def verdicts(rows: list[dict], views: tuple[str, ...], band: tuple[float, float]) -> list[str]:
    low, high = band
    out = []
    for row in rows:
        p = score(row, views)
        out.append("indeterminate" if p is None or low <= p < high else ("success" if p >= high else "failure"))
    return out


def evaluate(rows: list[dict], views: tuple[str, ...], band: tuple[float, float]) -> dict:
    return judge_report([r["label"] for r in rows], verdicts(rows, views, band))


def auc(rows: list[dict], views: tuple[str, ...]) -> float | None:
    """How well the score ranks, whatever the threshold: the chance that a success scores above a
    failure (ties count half), over the rows the score could be computed for."""
    wins = _wins(rows, views)
    return sum(wins) / len(wins) if wins else None


def _wins(rows: list[dict], views: tuple[str, ...]) -> list[float]:
    """1 for each (success, failure) pair of `rows` where the success scores higher, 0.5 a tie."""
    scored = [(p, r["label"] == "success") for r in rows if (p := score(r, views)) is not None]
    return [(a > b) + 0.5 * (a == b) for a, ok in scored if ok for b, bad in scored if not bad]


def paired_auc(rows: list[dict], views: tuple[str, ...]) -> float | None:
    """AUC over (success, failure) pairs of the same task only (`task_id`): whether the score
    tells a success from a failure of its own task, whatever height each task's scores sit at."""
    by_task: dict[str, list[dict]] = {}
    for row in rows:
        by_task.setdefault(row.get("task_id"), []).append(row)
    wins = [win for task_rows in by_task.values() for win in _wins(task_rows, views)]
    return sum(wins) / len(wins) if wins else None


def choose(rows: list[dict], views: tuple[str, ...]) -> tuple[float, float]:
    candidates = [(low, high) for low in GRID for high in GRID if low <= high]
    ranked = []
    for band in candidates:
        rep = evaluate(rows, views, band)
        if rep["indeterminate_rate"] <= MAX_ABSTENTION:
            ranked.append(((rep["balanced_accuracy"], -rep["false_success_rate"], -(band[1] - band[0])), band))
    if not ranked:
        return (0.5, 0.5)
    top = max(rank for rank, _ in ranked)
    tied = [band for rank, band in ranked if rank == top]
    return tied[len(tied) // 2]  # the middle of the equally good bands: furthest from both edges


def _three(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


COLUMNS = ("views", "band chosen on (train)", "band", "evaluated on (dev)", "OOD", "n", "balanced acc",
           "false success", "false failure", "abstain", "AUC", "paired", "best on dev")  # fmt: skip
RATES = ("balanced_accuracy", "false_success_rate", "false_failure_rate", "indeterminate_rate")


def table(train: list[dict], dev: list[dict]) -> tuple[str, list[dict]]:
    lines = []
    results = []
    for name, views in VIEWS.items():
        if not any(needed(views) <= set(r.get("probabilities") or {}) for r in train + dev):
            continue  # not asked in these runs
        sources = {f: [r for r in train if r["family"] == f] for f in FAMILIES} | {"both": train}
        for source, rows in sources.items():
            if not rows:
                continue
            band = choose(rows, views)
            for family in FAMILIES:
                target = [r for r in dev if r["family"] == family]
                if not target:
                    continue
                ceiling = evaluate(target, views, choose(target, views))["balanced_accuracy"]
                rep = evaluate(target, views, band) | {
                    "auc": auc(target, views), "paired_auc": paired_auc(target, views), "best_on_dev": ceiling
                }  # fmt: skip
                ood = "—" if source == "both" else ("yes" if source != family else "no")
                results.append({"views": name, "chosen_on": source, "band": band, "family": family, "ood": ood,
                                "n": len(target), **rep})  # fmt: skip
                lines.append(
                    [
                        *(name, source, f"[{band[0]:.2f}, {band[1]:.2f})", family, ood, len(target)),
                        *(tables.pct(rep[rate], 1) for rate in RATES),
                        *(_three(rep["auc"]), _three(rep["paired_auc"]), tables.pct(ceiling, 1)),
                    ]
                )
    return tables.table(COLUMNS, lines, align="lllll" + "r" * 8), results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", required=True, help="a judge_designs.py --out run on train files")
    parser.add_argument("--dev", required=True, help="a judge_designs.py --out run on dev files")
    parser.add_argument("--write", default=None, help="also write the table (Markdown) and results (JSON) here")
    args = parser.parse_args(argv)
    train, dev = load(Path(args.train)), load(Path(args.dev))
    text, results = table(train, dev)
    command = tables.benchmark_command("judge_probability_band", f"--train {args.train}", f"--dev {args.dev}")
    header = (
        f"## The probability judge's band: chosen on {len(train)} train records, reported on {len(dev)} dev records\n\n"
        f"{tables.reproduce_line(command)}\n"
    )
    print(header + "\n" + text)
    if args.write:
        out = Path(args.write)
        out.mkdir(parents=True, exist_ok=True)
        (out / "band.md").write_text(header + "\n" + text + "\n")
        (out / "band.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
