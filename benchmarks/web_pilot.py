"""Pilot for choosing the web stream's task types: how often a user's bare dspy.ReAct (no memory)
wins candidate MiniWoB++ types on their *train* seeds, so that the measured stream holds types
where memory has room to help (the bare agent wins roughly 10-70%). Dev and test seeds are never
played here, nor a held-out type (the adapter refuses them).

    python -m benchmarks.web_pilot [--lm local] [--agent react-starter] [--per-type 5] [--max-iters 8]
        [--types A,B] [--out FILE]

`--agent` is a user agent of `rbdspy bench --agent` (`react`, `react-starter`, `react-v2`): the
plain ReAct, or the same shown one made-up form first (the web adapter's `action_example`).

Prints, per type: wins, mean actions, seconds per episode; with --out, one JSONL line per episode
(its actions, outcome, seconds), and a rerun with the same --out plays only the episodes missing.
"""

from __future__ import annotations

import os

# Before any import loads OpenMP: llama.cpp's threads then yield a core another process wants
# (rbdspy.lm.local_engine says why); dspy, imported first, would load it.
os.environ.setdefault("GOMP_SPINCOUNT", "1000")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import dspy  # noqa: E402

from rbdspy.bench.agent_variants import USER_AGENTS, make_agent  # noqa: E402
from rbdspy.bench.tables import benchmark_command, table, table_row  # noqa: E402
from rbdspy.envs import make_env  # noqa: E402
from rbdspy.lm import make_lm  # noqa: E402

# Types with short forms, clicks and text entry, none held out (rbdspy.envs.miniwob_tasks).
CANDIDATES = (
    "click-button",
    "click-link",
    "click-dialog",
    "click-option",
    "click-checkboxes",
    "click-tab-2",
    "click-button-sequence",
    "click-widget",
    "focus-text",
    "focus-text-2",
    "enter-text",
    "enter-text-2",
    "login-user",
    "choose-list",
    "click-collapsible",
    "unicode-test",
)


def _done(path: Path | None) -> dict[str, dict]:
    if path is None or not path.is_file():
        return {}
    rows = (json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return {row["task_id"]: row for row in rows}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lm", default="local")
    parser.add_argument("--per-type", type=int, default=5)
    parser.add_argument("--max-iters", type=int, default=8)
    parser.add_argument("--agent", default="react", choices=sorted(USER_AGENTS))
    parser.add_argument("--types", default=",".join(CANDIDATES))
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    # As the bench plays: JSONAdapter, whose schema the embedded engine enforces while decoding.
    dspy.configure(lm=make_lm(args.lm), adapter=dspy.JSONAdapter())
    types = [t for t in args.types.split(",") if t]
    done = _done(args.out)
    parts = [f"--lm {args.lm}", f"--agent {args.agent}", f"--per-type {args.per_type}", f"--max-iters {args.max_iters}"]
    if types != list(CANDIDATES):
        parts.append(f"--types {','.join(types)}")
    print(f"# Web pilot: a bare dspy.ReAct on MiniWoB++ train seeds\n    {benchmark_command('web_pilot', *parts)}\n")
    print(table(["type", "wins", "actions", "s/episode"], align="lrrr"), flush=True)
    env = make_env("web", task_types=types)
    try:
        agent = make_agent(args.agent, env, args.max_iters)
        for task_type in types:
            rows = []
            for ref in env.tasks("train", [task_type], limit=args.per_type):
                row = done.get(ref.id)
                if row is None:
                    start = time.perf_counter()
                    trajectory = agent(task=env.describe(ref), task_id=ref.id).trajectory
                    actions = [s.content for s in trajectory.steps if s.role == "agent"]
                    row = {"task_id": ref.id, "won": bool(trajectory.outcome), "actions": actions}
                    row["seconds"] = round(time.perf_counter() - start, 1)
                    if args.out is not None:
                        with args.out.open("a", encoding="utf-8") as fh:
                            fh.write(json.dumps(row) + "\n")
                rows.append(row)
            wins = sum(r["won"] for r in rows)
            actions = sum(len(r["actions"]) for r in rows) / max(1, len(rows))
            seconds = sum(r["seconds"] for r in rows) / max(1, len(rows))
            print(table_row([task_type, f"{wins}/{len(rows)}", f"{actions:.1f}", f"{seconds:.0f}"]), flush=True)
    finally:
        env.close()


if __name__ == "__main__":
    main()
