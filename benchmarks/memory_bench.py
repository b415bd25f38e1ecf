"""Does memory make the agent better, and at what cost? A thin wrapper of `rbdspy bench`
(rbdspy/bench/) that prints the Markdown table and the command that reproduces it.

    python -m benchmarks.memory_bench [--env twx] [--tasks 12] [--arms default] [--seed 0] [--max-steps 8]
                                      [--out DIR] [--resume] [--smoke] [--compiled DIR] [--lm local] [--embedder local]

Every arm plays the same stream (half train variations to build memory, half dev variations to
measure), each from an empty bank; the table reports the environment's success rate, steps,
LM calls and tokens per task, memories written and wall time, with a paired bootstrap interval of
each arm's difference to no-memory. Default size: about an hour on the embedded local LM on
2 cores (see the README's arithmetic); --smoke is the CI size.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rbdspy.bench import run_bench
from rbdspy.bench.report import RESULTS_MD
from rbdspy.bench.tables import benchmark_command, reproduce_line


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="twx", choices=["twx", "scienceworld"])
    parser.add_argument("--tasks", type=int, default=None)
    parser.add_argument("--arms", default="default")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-steps", type=int, default=None)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument(
        "--compiled", default=None, help="compiled prompts: `rbdspy compile`'s output directory or a bank's .json"
    )
    parser.add_argument("--no-mlflow", action="store_true")
    parser.add_argument("--lm", default=None)
    parser.add_argument("--embedder", default=None)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None, lm=None, embedder=None) -> dict:
    """`lm` / `embedder` objects override --lm / --embedder (tests pass a scripted LM)."""
    args = parse(argv)
    if lm is None or embedder is None:
        from rbdspy.lm import make_embedder, make_lm

        lm = lm or make_lm(args.lm)
        embedder = embedder or make_embedder(args.embedder)
    results = run_bench(
        lm,
        embedder,
        args.out,
        env=args.env,
        n_tasks=args.tasks,
        arms=args.arms,
        seed=args.seed,
        max_steps=args.max_steps,
        compiled=args.compiled,
        resume=args.resume,
        smoke=args.smoke,
        lm_name=args.lm or "local",
        embedder_name=args.embedder or "local",
        mlflow=not args.no_mlflow,
    )
    out_dir = Path(results["out_dir"])
    print((out_dir / RESULTS_MD).read_text(encoding="utf-8"))
    print(reproduce_line(benchmark_command("memory_bench", *(argv if argv is not None else sys.argv[1:]))))
    return results


if __name__ == "__main__":
    main()
