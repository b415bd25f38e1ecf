"""Embedded LM and embedder performance: what a ReasoningBank loop costs on this machine.

    python -m benchmarks.lm_bench [--models local local-fast] [--calls 20] [--out results.json]

For each embedded model: time to get the verified model file and to load the server; prompt
reading and generation speed (llama.cpp's own timings); the p50 latency of a judge-style typed
call of rbdspy's own ``Judge`` (chain of thought over ``JudgeTrajectory``: reasoning, verdict,
rationale) through DSPy's JSONAdapter with constrained decoding, on a ~1,000-token trajectory:

- cold: nothing reusable in llama.cpp's prompt cache (the instructions start with a per-round
  nonce, so the prompt differs from every earlier one within its first ~15 tokens);
- warm: the next call of the same round, same instructions and task, the trajectory sharing its
  first ~3/4 and ending differently (a sibling rollout or a refined attempt, as MaTTS makes);
- warm-instr: a third call sharing only the instruction prefix (new task, new trajectory), the
  plain "next judge call" case.

Every call is a typed parse: failures are counted, never retried. Then MiniLM sentences/s.
Targets (2 cores): `local` cold p50 <= 20 s; warm >= 1.5x faster than cold; 0 parse failures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

import dspy

from rbdspy import Judge
from rbdspy.bench.tables import benchmark_command, reproduce_line, table
from rbdspy.lm import make_embedder, make_lm
from rbdspy.lm.model_files import ensure_model

MAX_TOKENS = 256
STEPS_PER_TRAJECTORY = 18  # ~1,000 prompt tokens with the judge instructions
SHARED_STEPS = 13


# — synthetic trajectories (deterministic) ——————————————————————————————————————————————

ROOMS = ["kitchen", "hallway", "workshop", "greenhouse", "bathroom", "living room", "foundry", "art studio"]
OBJECTS = [
    "metal pot",
    "thermometer",
    "orange juice",
    "seed jar",
    "flower pot 2",
    "lighter",
    "glass cup",
    "wooden table",
    "stove",
    "sink",
    "freezer",
    "bee hive",
    "blue paint",
    "red wire",
    "battery",
]
TASKS = [
    "Boil the water in the metal pot and confirm with the thermometer that it reached 100 degrees C.",
    "Measure the melting point of the chocolate and put it in the orange box if above 50 C.",
    "Grow an apple: plant the seed in flower pot 2, water it, and wait until the fruit appears.",
    "Create green paint by mixing blue and yellow paint in the glass cup.",
    "Power the light bulb using the battery and two wires, then confirm it is on.",
    "Determine whether the unknown substance B is electrically conductive.",
    "Freeze the orange juice and report its state after ten steps in the freezer.",
    "Find a living thing in the greenhouse and move it to the red box in the hallway.",
]


def _step(rng: random.Random, i: int) -> str:
    room, obj, other = rng.choice(ROOMS), rng.choice(OBJECTS), rng.choice(OBJECTS)
    action = rng.choice(
        [
            f"go to {room}",
            f"pick up {obj}",
            f"look at {obj}",
            f"use {obj} on {other}",
            f"open {obj}",
            f"move {obj} to {other}",
            f"focus on {obj}",
            "wait1",
            "inventory",
        ]
    )
    observation = rng.choice(
        [
            f"You are in the {room}. You see a {obj}, a {other}, and a door to the {rng.choice(ROOMS)}.",
            f"The {obj} is now in your inventory. Its temperature reads {rng.randint(5, 95)} degrees C.",
            f"Nothing happens. The {obj} cannot be used on the {other}.",
            f"You move the {obj} to the {other}. The {other} now contains the {obj} and some water.",
            f"A {obj} (containing nothing). It feels {rng.choice(['warm', 'cold', 'heavy', 'sticky'])}.",
            f"Time passes. The {obj} on the {other} is {rng.choice(['heating', 'cooling', 'unchanged'])}.",
        ]
    )
    thought = rng.choice(
        [
            "I should check the state first.",
            "This looks like progress.",
            "That did not work; try another approach.",
            "I need the other object.",
        ]
    )
    return f"Step {i}: thought: {thought} action: {action}\nobservation: {observation}"


def trajectory(seed: int, shared_from: int | None = None) -> str:
    """STEPS_PER_TRAJECTORY steps; with `shared_from`, the first SHARED_STEPS steps are those
    of trajectory(shared_from) and the rest differ."""
    head_rng = random.Random(shared_from if shared_from is not None else seed)
    steps = [_step(head_rng, i) for i in range(1, SHARED_STEPS + 1)]
    tail_rng = random.Random(seed * 7919 + 1)
    steps += [_step(tail_rng, i) for i in range(SHARED_STEPS + 1, STEPS_PER_TRAJECTORY + 1)]
    ending = tail_rng.choice(
        [
            "The agent says: task complete.",
            "The agent gives up after running out of steps.",
            "Observation: the thermometer reads 100 degrees C. The agent says: done.",
        ]
    )
    return "\n".join(steps) + "\n" + ending


# — measuring ————————————————————————————————————————————————————————————————————————————


def _timed_call(lm, judge, task, traj):
    """One judge call: (seconds, llama.cpp timings, parsed ok, truncated)."""
    start = time.perf_counter()
    # Judge turns any LM or parse error into an "indeterminate" verdict, so that is the failure count.
    verdict = judge(task=task, trajectory=traj).verdict
    ok = verdict.label in ("success", "failure")
    if not ok:
        print(f"    call failed: {verdict.rationale[:200]}", file=sys.stderr)
    seconds = time.perf_counter() - start
    response = lm.history[-1]["response"] if lm.history else None
    timings = (getattr(response, "provider_data", None) or {}).get("timings", {})
    return seconds, timings, ok, getattr(response, "finish_reason", None) == "length"


def bench_model(spec: str, calls: int) -> dict:
    print(f"[{spec}] preparing model file ...", file=sys.stderr)
    t0 = time.perf_counter()
    ensure_model(spec)
    file_s = time.perf_counter() - t0
    lm = make_lm(spec, max_tokens=MAX_TOKENS, temperature=0.0)
    t0 = time.perf_counter()
    lm.engine.load()
    load_s = time.perf_counter() - t0

    rows = {"cold": [], "warm": [], "warm-instr": []}
    failures = truncated = 0
    wall0, cpu0 = time.perf_counter(), time.process_time()
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        for r in range(calls):
            nonce = f"{os.getpid()}-{r}-{time.time_ns()}"
            judge = Judge()
            sig = judge.predict.signature
            judge.predict.signature = sig.with_instructions(f"(round {nonce})\n" + sig.instructions)
            task = TASKS[r % len(TASKS)]
            plan = [
                ("cold", task, trajectory(1000 + r)),
                ("warm", task, trajectory(2000 + r, shared_from=1000 + r)),
                ("warm-instr", TASKS[(r + 3) % len(TASKS)], trajectory(3000 + r)),
            ]
            for kind, task_text, traj in plan:
                seconds, timings, ok, cut = _timed_call(lm, judge, task_text, traj)
                failures += not ok
                truncated += cut
                rows[kind].append(
                    {
                        "s": seconds,
                        **{
                            k: timings.get(k)
                            for k in ("prompt_n", "prompt_ms", "predicted_n", "predicted_ms", "cache_n")
                        },
                    }
                )
            print(
                f"[{spec}] round {r + 1}/{calls}: " + ", ".join(f"{kind} {rows[kind][-1]['s']:.1f}s" for kind in rows),
                file=sys.stderr,
            )

    cpu_share = (time.process_time() - cpu0) / (time.perf_counter() - wall0)

    def p50(kind):
        return statistics.median(row["s"] for row in rows[kind])

    def total(kind, key):
        return sum(row[key] or 0 for row in rows[kind])

    cold_prompt_tokens = [(row["prompt_n"] or 0) + (row["cache_n"] or 0) for row in rows["cold"]]
    gen_n = sum(total(k, "predicted_n") for k in rows)
    gen_ms = sum(total(k, "predicted_ms") for k in rows)
    return {
        "model": spec,
        "file_s": file_s,
        "load_s": load_s,
        "prompt_tok_s": 1000 * total("cold", "prompt_n") / max(total("cold", "prompt_ms"), 1e-9),
        "gen_tok_s": 1000 * gen_n / max(gen_ms, 1e-9),
        "prompt_tokens": statistics.median(cold_prompt_tokens),
        "cold_p50": p50("cold"),
        "warm_p50": p50("warm"),
        "warm_instr_p50": p50("warm-instr"),
        "warm_cached": statistics.median(row["cache_n"] or 0 for row in rows["warm"]),
        "warm_instr_cached": statistics.median(row["cache_n"] or 0 for row in rows["warm-instr"]),
        "out_tokens": statistics.median(row["predicted_n"] or 0 for row in rows["cold"]),
        "failures": failures,
        "truncated": truncated,
        "cpu_share": cpu_share,
        "threads": lm.engine._settings()["n_threads"],
        "n_calls": 3 * calls,
        "rows": rows,
    }


def bench_embedder(n: int = 1000) -> dict:
    embed = make_embedder("local")
    t0 = time.perf_counter()
    embed(["warm-up"])
    load_s = time.perf_counter() - t0
    rng = random.Random(0)
    texts = [
        f"When the {rng.choice(OBJECTS)} is in the {rng.choice(ROOMS)}, check its temperature before "
        f"using it on the {rng.choice(OBJECTS)}; never assume the task is complete without observing it."
        for _ in range(n)
    ]
    t0 = time.perf_counter()
    embed(texts)
    return {"load_s": load_s, "sent_s": n / (time.perf_counter() - t0), "n": n}


COLUMNS = (
    "model",
    "file ready s",
    "load s",
    "prompt tok/s",
    "gen tok/s",
    "prompt tokens",
    "judge p50 cold s",
    "warm p50 s (cached tok)",
    "warm speedup",
    "warm-instr p50 s (cached tok)",
    "out tokens p50",
    "parse failures",
    "truncated",
    "CPU share",
)


def _row(r: dict) -> list[str]:
    return [
        r["model"],
        f"{r['file_s']:.2f}",
        f"{r['load_s']:.1f}",
        f"{r['prompt_tok_s']:.0f}",
        f"{r['gen_tok_s']:.1f}",
        f"{r['prompt_tokens']:.0f}",
        f"{r['cold_p50']:.1f}",
        f"{r['warm_p50']:.1f} ({r['warm_cached']:.0f})",
        f"{r['cold_p50'] / r['warm_p50']:.2f}x",
        f"{r['warm_instr_p50']:.1f} ({r['warm_instr_cached']:.0f})",
        f"{r['out_tokens']:.0f}",
        f"{r['failures']}/{r['n_calls']}",
        f"{r['truncated']}/{r['n_calls']}",
        f"{r['cpu_share']:.2f}",
    ]


def _cpu_pressure() -> str:
    """Linux PSI: the 5-minute share of time some runnable task waited for a CPU."""
    try:
        with open("/proc/pressure/cpu") as fh:
            return fh.readline().split()[3].split("=")[1] + "%"
    except (OSError, IndexError):
        return "n/a"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["local", "local-fast"], choices=["local", "local-fast"])
    parser.add_argument("--calls", type=int, default=20, help="rounds per model (each: cold, warm, warm-instr)")
    parser.add_argument("--out", type=Path, help="also write the raw figures as JSON here")
    args = parser.parse_args(argv)

    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)  # measure the model, not the cache
    load_before, pressure_before = os.getloadavg(), _cpu_pressure()
    results = [bench_model(spec, args.calls) for spec in args.models]
    emb = bench_embedder()
    load_after, pressure_after = os.getloadavg(), _cpu_pressure()

    print(
        f"\n## rbdspy LM benchmark ({platform.machine()}, {os.cpu_count()} CPUs; JSONAdapter with constrained "
        f"decoding, temperature 0, max_tokens {MAX_TOKENS})\n"
    )
    print(
        f"Machine load: load avg {load_before[0]:.2f} before / {load_after[0]:.2f} after; CPU pressure "
        f"(share of time runnable tasks waited for a CPU, 5-min avg) {pressure_before} before / "
        f"{pressure_after} after. 'CPU share' is the cores this process got while judging "
        f"(llama.cpp asked for {results[0]['threads'] if results else '-'}).\n"
    )
    print(table(COLUMNS, [_row(r) for r in results]))
    embedder = ["local (MiniLM-L6, 384-d)", f"{emb['load_s']:.1f}", f"{emb['sent_s']:.0f}"]
    print("\n" + table(["embedder", "load s", f"sentences/s ({emb['n']} sentences)"], [embedder]))
    command = benchmark_command("lm_bench", f"--models {' '.join(args.models)}", f"--calls {args.calls}")
    print(f"\n{reproduce_line(command)}")
    if args.out:
        args.out.write_text(
            json.dumps(
                {
                    "models": results,
                    "embedder": emb,
                    "loadavg": [load_before, load_after],
                    "cpu_pressure": [pressure_before, pressure_after],
                },
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
