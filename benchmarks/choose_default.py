"""Applies the pre-registered rule that chooses rbdspy's default memory for a program that is not
`EnvAgent`, from a run's build records only (docs/results/memory.md, "The web and your own agent").

The rule: of the forms a user can run without a reward at test time (the judge's labels), the one
that wins the most build tasks, a tie going to fewer prompt tokens per episode. Arms labelled by the
environment are printed beside the candidates and cannot be chosen. Only build records are read:
the measured tasks are what the choice is then measured on.

    python -m benchmarks.choose_default docs/bench/web-stream-local --build 16
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from rbdspy.bench.records import arm_path, read_records

CANDIDATES = ("reasoningbank", "trajectory-memory", "workflow-memory", "demo-memory")
BESIDE = ("no-memory", "demo-memory-oracle", "compiled-agent")


@dataclass(frozen=True)
class BuildTally:
    arm: str
    tasks: int
    wins: int
    prompt_tokens: float  # mean per episode


def build_tally(run_dir: Path, arm: str, build: int) -> BuildTally:
    """The arm's wins and mean prompt tokens over the run's first `build` build tasks."""
    records = [r for r in read_records(arm_path(run_dir, arm)) if r["phase"] == "build"]
    records = sorted(records, key=lambda r: r["index"])[:build]
    if len(records) < build:
        raise ValueError(f"{arm}: {len(records)} of {build} build tasks played in {run_dir}")
    tokens = sum(r["prompt_tokens"] for r in records) / len(records)
    return BuildTally(arm, len(records), sum(bool(r["success"]) for r in records), tokens)


def choose(tallies: list[BuildTally]) -> BuildTally:
    """Most wins; a tie goes to fewer prompt tokens per episode."""
    if not tallies:
        raise ValueError("no candidate arm to choose from")
    return min(tallies, key=lambda t: (-t.wins, t.prompt_tokens))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--build", type=int, required=True, help="how many build tasks the rule reads")
    args = parser.parse_args(argv)
    candidates = [build_tally(args.run_dir, arm, args.build) for arm in CANDIDATES]
    beside = [build_tally(args.run_dir, arm, args.build) for arm in BESIDE if arm_path(args.run_dir, arm).is_file()]
    chosen = choose(candidates)
    print(f"| arm | build tasks won (of {args.build}) | prompt tokens / episode | |")
    print("|---|---:|---:|---|")
    for tally in candidates + beside:
        mark = "chosen" if tally is chosen else ("candidate" if tally in candidates else "not eligible")
        print(f"| {tally.arm} | {tally.wins} | {tally.prompt_tokens:,.0f} | {mark} |")
    print(f"\nChosen: {chosen.arm}")
    print(f"Reproduce: python -m benchmarks.choose_default {args.run_dir} --build {args.build}")


if __name__ == "__main__":
    main()
