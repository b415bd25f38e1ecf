"""A user's compile of their own program with a bank inside, measured: the compile guide's recipe
(docs/guides/compile.md, "Compile your own program with a bank inside") on the embedded LM.

The program is the guide's `Solver`: a ReasoningBank around the user's ChainOfThought. The tasks are
counting word problems written here from templates, so every answer is known: train on legs
(animals), measure on legs with other animals and numbers and on wheels (vehicles), a kind the
compile never saw. `BootstrapFewShot` over the train problems with the bank's own parts frozen
(`freeze_bank_parts`), the metric the user's: the answer's number right. Each program then plays the
dev problems in order over a fresh store of its own (the bank learns as it goes, as in use), scored
by DSPy's `Evaluate`, and the two are compared task by task.

    python -m benchmarks.user_compile [--lm local] [--train 6] [--dev 16] [--seed 0] [--out DIR]
"""

from __future__ import annotations

import os

# Before any import loads OpenMP: llama.cpp's threads then yield a core another process wants.
os.environ.setdefault("GOMP_SPINCOUNT", "1000")

import argparse  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import dspy  # noqa: E402

import rbdspy  # noqa: E402
from rbdspy.bench.provenance import session_info  # noqa: E402
from rbdspy.bench.stats import paired_bootstrap  # noqa: E402
from rbdspy.bench.tables import benchmark_command, table  # noqa: E402
from rbdspy.optimizers import freeze_bank_parts  # noqa: E402

LEGS = {"spider": 8, "ant": 6, "duck": 2, "dog": 4, "beetle": 6, "hen": 2, "cat": 4, "horse": 4}
WHEELS = {"bicycle": 2, "tricycle": 3, "car": 4, "truck": 6, "unicycle": 1, "van": 4}
TRAIN_ANIMALS = ("spider", "duck", "dog", "beetle")  # the dev legs problems use the other four
NUMBER = re.compile(r"-?\d+")


class Solver(dspy.Module):
    """The guide's program: a bank around the user's agent."""

    def __init__(self, store: rbdspy.MemoryStore):
        super().__init__()
        self.bank = rbdspy.ReasoningBank(dspy.ChainOfThought("task, memory -> answer"), store)

    def forward(self, task: str) -> dspy.Prediction:
        return self.bank(task=task)


def number_right(example: dspy.Example, prediction: dspy.Prediction, trace=None) -> bool:
    """The user's metric: the first number in the answer is the count."""
    found = NUMBER.search(str(getattr(prediction, "answer", "")))
    return bool(found) and int(found.group()) == int(example.answer)


def problem(rng: random.Random, counts: dict[str, int], names: list[str], unit: str, place: str) -> dspy.Example:
    chosen = rng.sample(names, 3)
    amounts = [rng.randint(2, 9) for _ in chosen]
    listed = ", ".join(f"{n} {name}s" for n, name in zip(amounts[:-1], chosen[:-1], strict=True))
    task = f"{place} has {listed} and {amounts[-1]} {chosen[-1]}s. How many {unit} are there in all?"
    total = sum(n * counts[name] for n, name in zip(amounts, chosen, strict=True))
    return dspy.Example(task=task, answer=str(total), kind=unit).with_inputs("task")


def problems(n_train: int, n_dev: int, seed: int) -> tuple[list[dspy.Example], list[dspy.Example]]:
    """Train: legs of the train animals. Dev: legs of the other animals and wheels, alternating."""
    rng = random.Random(seed)
    train = [problem(rng, LEGS, list(TRAIN_ANIMALS), "legs", "A yard") for _ in range(n_train)]
    other = [a for a in LEGS if a not in TRAIN_ANIMALS]
    dev = [
        problem(rng, LEGS, other, "legs", "A field")
        if i % 2 == 0
        else problem(rng, WHEELS, list(WHEELS), "wheels", "A car park")
        for i in range(n_dev)
    ]
    return train, dev


def play(program: dspy.Module, devset: list[dspy.Example]) -> list[dict]:
    """Each dev problem in order (the bank learns from each before the next), scored per problem."""
    evaluate = dspy.Evaluate(devset=devset, metric=number_right, num_threads=1, display_progress=False)
    result = evaluate(program)
    return [
        {
            "task": ex.task,
            "kind": ex.kind,
            "truth": ex.answer,
            "answer": str(getattr(pred, "answer", "")),
            "right": bool(score),
        }
        for ex, pred, score in result.results
    ]


def run(args: argparse.Namespace) -> dict:
    session = session_info()  # where and at which revision it started, not where it ended
    dspy.configure(lm=rbdspy.make_lm(args.lm))
    embedder = rbdspy.make_embedder(args.embedder)
    train, dev = problems(args.train, args.dev, args.seed)
    scratch = Path(tempfile.mkdtemp(prefix="user-compile-"))
    started = time.perf_counter()
    program = freeze_bank_parts(Solver(rbdspy.MemoryStore(scratch / "compile", embedder=embedder)))
    optimizer = dspy.BootstrapFewShot(metric=number_right, max_bootstrapped_demos=args.max_demos, max_labeled_demos=0)
    compiled = optimizer.compile(program, trainset=train)
    compile_s = time.perf_counter() - started
    demos = {name: len(p.demos) for name, p in compiled.named_predictors()}
    played = {}
    for arm, built in (("hand-written", program), ("compiled", compiled)):
        fresh = freeze_bank_parts(Solver(rbdspy.MemoryStore(scratch / arm, embedder=embedder)))
        fresh.load_state(built.dump_state())  # the arm's predictors over a store of its own
        started = time.perf_counter()
        played[arm] = {"rows": play(fresh, dev), "wall_s": time.perf_counter() - started}
    right = {arm: [float(r["right"]) for r in p["rows"]] for arm, p in played.items()}
    return {
        "session": session,
        "command": benchmark_command(
            "user_compile",
            f"--lm {args.lm} --embedder {args.embedder} --train {args.train} --dev {args.dev}",
            f"--max-demos {args.max_demos} --seed {args.seed} --out {args.out}",
        ),
        "train": [ex.toDict() for ex in train],
        "compile_s": compile_s,
        "demos": demos,
        "played": played,
        "paired": paired_bootstrap(right["compiled"], right["hand-written"]),
    }


def report(result: dict) -> str:
    rows = []
    for arm, p in result["played"].items():
        by_kind = {k: [r["right"] for r in p["rows"] if r["kind"] == k] for k in ("legs", "wheels")}
        cells = [f"{sum(v)}/{len(v)}" for v in by_kind.values()]
        rows.append([arm, f"{sum(r['right'] for r in p['rows'])}/{len(p['rows'])}", *cells, f"{p['wall_s']:.0f}"])
    paired = result["paired"]
    session = result["session"]
    return "\n".join(
        [
            "# A user's compile of a program with a bank inside",
            "",
            f"Written by `{result['command']}` on {session.get('started_at', '')[:10]} "
            f"({session.get('cpu', '')}, revision {session.get('code_revision', '')}).",
            "",
            f"BootstrapFewShot over {len(result['train'])} train problems (legs, four animals) took "
            f"{result['compile_s']:.0f} s and kept demos {result['demos']}.",
            "",
            table(
                ["program", "dev right", "legs (other animals)", "wheels (unseen kind)", "wall s"], rows, align="lrrrr"
            ),
            "",
            f"Compiled minus hand-written, paired over the dev problems: {100 * paired['diff']:+.0f} pp "
            f"[{100 * paired['low']:+.0f}, {100 * paired['high']:+.0f}] (n={paired['n']}).",
            "",
        ]
    )


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lm", default="local")
    parser.add_argument("--embedder", default="local")
    parser.add_argument("--train", type=int, default=6)
    parser.add_argument("--dev", type=int, default=16)
    parser.add_argument("--max-demos", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="bench-runs/user-compile")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    args = parse(argv)
    result = run(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "result.json").write_text(json.dumps(result, indent=2, default=str) + "\n", encoding="utf-8")
    text = report(result)
    (out / "results.md").write_text(text, encoding="utf-8")
    print(text)
    return result


if __name__ == "__main__":
    main()
