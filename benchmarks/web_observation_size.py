"""How long a web page is as the agent reads it: the tokens of every observation a user's ReAct
saw on a web bench run's *build* tasks (train seeds), counted with the embedded model's own
tokenizer.

Each build episode of every arm is played again from its record: the task's page is opened at its
seed through `EnvironmentTools` (what a user's `dspy.ReAct` calls), and the recorded actions are
sent in turn. Every answer the tools give (the page, the actions admissible now) is counted, and so
is the page's text alone. Measured tasks are never opened here.

    python -m benchmarks.web_observation_size --run docs/bench/web-stream-local [--tokenizer local|chars]
        [--arms A,B] [--out DIR]

`--tokenizer local` reads the tokenizer out of the embedded model's GGUF file (transformers with the
`gguf` package, no download); `chars` is `rbdspy.render.budget.estimate_tokens` (characters / 3.5).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from rbdspy.bench.labelled import run_arms
from rbdspy.bench.provenance import session_info
from rbdspy.bench.records import arm_path, read_records
from rbdspy.bench.tables import benchmark_command, table
from rbdspy.envs import make_env
from rbdspy.maps.tools import EnvironmentTools
from rbdspy.render.budget import estimate_tokens

Counter = Callable[[str], int]


def local_counter(spec: str = "local") -> Counter:
    """The embedded model's tokenizer, read from its GGUF file (needs the `gguf` package)."""
    import importlib.util

    if importlib.util.find_spec("gguf") is None:
        raise SystemExit("--tokenizer local reads the model's GGUF file and needs the gguf package: pip install gguf")
    from transformers import AutoTokenizer

    from rbdspy.lm.model_files import ensure_model

    path = ensure_model(spec)
    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    return lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])


def build_episodes(run: Path, arms: list[str] | None) -> list[dict]:
    """Every build record of the run's arms (`arms`: all when None), in stream order."""
    names = [arm for arm in run_arms(run) if not arms or arm in arms]
    rows = [r for arm in names for r in read_records(arm_path(run, arm)) if r["phase"] == "build"]
    if not rows:
        raise SystemExit(f"{run}: no build records in arms/*.jsonl" + (f" for arms {','.join(arms)}" if arms else ""))
    return sorted(rows, key=lambda r: (r["index"], r["arm"]))


def replay(env, record: dict, count: Counter) -> dict:
    """The episode of `record` played again: the tokens of each tool answer and of each page."""
    tools = EnvironmentTools(env, record["task_id"])
    answers = [count(tools.look())]
    pages = [count(tools.steps[0].content)]  # the first page, as the episode recorded it
    for action in record["actions"]:
        answers.append(count(tools.act(action)))
        pages.append(count(tools.steps[-1].content))
    return {"answers": answers, "pages": pages, "won_again": env.success == record["success"]}


def percentile(values: list[int], q: float) -> int:
    """The nearest-rank percentile (q in 0-100) of `values`."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def report(episodes: list[dict], tokenizer: str, command: str, info: dict) -> str:
    by_type: dict[str, dict[str, list[int]]] = defaultdict(lambda: {"answers": [], "pages": []})
    for episode in episodes:
        for key in ("answers", "pages"):
            by_type[episode["task_type"]][key] += episode[key]
            by_type["all"][key] += episode[key]
    rows = []
    for kind in [*sorted(k for k in by_type if k != "all"), "all"]:
        answers, pages = by_type[kind]["answers"], by_type[kind]["pages"]
        cells = [len(answers), percentile(pages, 50), percentile(pages, 95), max(pages)]
        cells += [percentile(answers, 50), percentile(answers, 95), max(answers)]
        rows.append([f"**{kind}**" if kind == "all" else kind, *cells])
    header = ["type", "observations", "page p50", "page p95", "page max", "answer p50", "answer p95", "answer max"]
    same = sum(e["won_again"] for e in episodes)
    return "\n".join(
        [
            "# A web page as the agent reads it: tokens per observation",
            "",
            f"Machine: {info['cpu']} ({info['cpus']} CPUs); revision {info['code_revision']}; tokenizer: {tokenizer}.",
            f"Build episodes (train seeds) of the run, played again from their records: {len(episodes)};"
            f" the outcome was the recorded one in {same} of them (a page whose problem depends on more than its seed"
            " can differ).",
            "A page is the page's text alone; an answer is what the tools return to the agent after each call"
            " (the page and the actions admissible now).",
            "",
            f"command: {command}",
            "",
            table(header, rows, "lrrrrrrr"),
            "",
        ]
    )


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, required=True, help="a web bench run's directory (its arms/*.jsonl)")
    parser.add_argument("--tokenizer", choices=("local", "chars"), default="local")
    parser.add_argument("--arms", default=None, help="comma-separated arms (default: every arm of the run)")
    parser.add_argument("--out", type=Path, default=None, help="directory for results.md and episodes.jsonl")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> str:
    args = parse(argv)
    arms = args.arms.split(",") if args.arms else None
    records = build_episodes(args.run, arms)
    info = session_info()
    count = local_counter() if args.tokenizer == "local" else estimate_tokens
    env = make_env("web")
    episodes, started = [], time.perf_counter()
    try:
        for record in records:
            kept = {key: record[key] for key in ("task_id", "task_type", "arm")}
            episodes.append(kept | replay(env, record, count))
    finally:
        env.close()
    command = benchmark_command("web_observation_size", *(sys.argv[1:] if argv is None else argv))
    text = report(episodes, args.tokenizer, command, info)
    text += f"\nWall time: {time.perf_counter() - started:.0f} s.\n"
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "results.md").write_text(text)
        (args.out / "episodes.jsonl").write_text("".join(json.dumps(e) + "\n" for e in episodes))
    print(text)
    return text


if __name__ == "__main__":
    main()
