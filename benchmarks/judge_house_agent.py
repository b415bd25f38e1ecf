"""The judge on the agent's own trajectories of a house run, with and without the final answer the
agent wrote: does the shipped band label them as the environment does, and does a calibrated one?

    python -m benchmarks.judge_house_agent \
        --hidden docs/bench/judge-house-agent-local --shown docs/bench/judge-house-agent-local/as-judged

No LM: it reads the P(success) that `benchmarks/judge_designs.py --designs probability` recorded
for the trajectories `rbdspy data from-bench` wrote from a house run (the same trajectories twice:
`--hidden` judged without the agent's final answer, `--shown` with it, as the bank's judge reads
them in the loop). For each: the score ranges of wins and losses, AUC, the shipped band's labels,
and a band calibrated on half the quests (`choose_band`, the default settings) scored on the other
half, both ways round (quests split by the parity of their number, so no quest is on both sides),
on the trajectories both runs judged.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks.judge_calibration_sweep import rates, scored
from benchmarks.judge_probability_band import auc, load
from rbdspy.bench import tables
from rbdspy.judge.calibration import choose_band
from rbdspy.judge.judge import DEFAULT_PROBABILITY_BAND
from rbdspy.judge.probability import DEFAULT_PROBABILITY_VIEWS


def two_fold(rows: list[dict]) -> tuple[float, float] | None:
    """(balanced accuracy, false-success rate) of bands calibrated on even quests and scored on odd
    ones and the other way round, pooled over both halves. None when a half lacks a label."""
    halves = [[r for r in rows if int(r["task_id"].rsplit("/", 1)[1]) % 2 == parity] for parity in (0, 1)]
    called = []
    for train, test in (halves, halves[::-1]):
        pairs = scored(train)
        if len({ok for _, ok in pairs}) < 2:
            return None
        band = choose_band([p for p, _ in pairs], [ok for _, ok in pairs]).band[1]
        called += [(1.0 if p >= band else 0.0, ok) for p, ok in scored(test)]
    return rates(called, 0.5)


def summary(name: str, rows: list[dict]) -> list:
    pairs = scored(rows)
    wins = [p for p, ok in pairs if ok]
    losses = [p for p, ok in pairs if not ok]
    shipped = rates(pairs, DEFAULT_PROBABILITY_BAND[1])
    fold = two_fold(rows)
    return [
        name,
        f"{len(wins)} / {len(losses)}",
        f"{min(wins):.2f}-{max(wins):.2f}",
        f"{min(losses):.2f}-{max(losses):.2f}",
        f"{auc(rows, DEFAULT_PROBABILITY_VIEWS):.3f}",
        *(tables.pct(x, 1) for x in shipped),
        *((tables.pct(x, 1) for x in fold) if fold else ("-", "-")),
    ]


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hidden", required=True, help="judge_designs.py --out run, final answers hidden")
    parser.add_argument("--shown", required=True, help="judge_designs.py --out run, the agent's final answers shown")
    args = parser.parse_args(argv)
    columns = ("final answer", "wins / losses", "P(success) of wins", "of losses", "AUC", "shipped band: balanced acc",
               "false success", "calibrated on the other quests: balanced acc", "false success")  # fmt: skip
    hidden, shown = load(Path(args.hidden)), load(Path(args.shown))
    both = {r["key"] for r in hidden} & {r["key"] for r in shown}  # the trajectories both runs judged
    rows = [
        summary("hidden", [r for r in hidden if r["key"] in both]),
        summary("shown (as the loop's judge reads it)", [r for r in shown if r["key"] in both]),
    ]
    command = tables.benchmark_command("judge_house_agent", f"--hidden {args.hidden}", f"--shown {args.shown}")
    text = tables.table(columns, rows, align="l" + "r" * 8) + "\n\n" + tables.reproduce_line(command)
    print(text)
    return text


if __name__ == "__main__":
    main()
