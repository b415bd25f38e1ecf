"""Judge designs x trajectory renderers, on the full dev files of both environment families.

    python -m benchmarks.judge_designs --out bench-runs/judge-designs --resume        # the measurement
    python -m benchmarks.judge_designs --estimate                                     # its LM time, no LM
    python -m benchmarks.judge_designs --smoke --out /tmp/judge-smoke                 # a scripted LM

Every judge design (`rbdspy.judge.judge_for`: rationale, checklist, self-consistency, confidence) is run with
each renderer (`legacy`: today's `Trajectory.render(6000)`; `evidence`: `EvidenceRenderer` at
`--budget-tokens`) on every record of `--data` (default: datasets/scienceworld-dev.jsonl and
datasets/twx-dev.jsonl, labels from the environments; the trajectories' final answers hidden, as a
compile hides them). Reported per design, renderer and environment family: balanced accuracy
(abstentions count as wrong), false-success rate (failures judged success, over failures),
false-failure rate, abstention rate (indeterminate), wall seconds, LM tokens (prompt + completion)
and LM calls per trajectory.

Out of distribution, always: each row names the family it is evaluated on and, for a compiled
judge (`--compiled DIR_OR_JSON --tuned-on FAMILY`), the family it was tuned on; `OOD` marks rows
where the two differ. Hand-written prompts were tuned on neither. The confidence design's raw
labels and confidences are kept, so its threshold is swept afterwards without an LM, and chosen on
one family then reported on the other.

Resumable: one JSONL line per (arm, record) under `--out/records/`, written as soon as it is
judged; `--resume` skips what is there (a run can span sessions; arms from several invocations,
e.g. hand-written then compiled, share one table). Records are taken interleaved (files, then
labels), and every arm judges record i before any arm judges record i+1, so a partial run
compares the arms on the same records. The DSPy cache is off (timings are real) unless `--cache`.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import itertools
import json
import math
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

import dspy

from rbdspy.bench import tables
from rbdspy.bench.provenance import session_info
from rbdspy.core.lm_errors import LMSetupError
from rbdspy.datasets.dataset import LabelledTrajectory, load_records
from rbdspy.judge.base import BaseJudge
from rbdspy.judge.judge import (
    DEFAULT_CONFIDENCE_THRESHOLD,
    DEFAULT_PROBABILITY_BAND,
    DEFAULT_SAMPLE_TEMPERATURE,
    DEFAULT_SAMPLES,
    JUDGE_DESIGNS,
    PROBABILITY_PREDICTORS,
    judge_for,
)
from rbdspy.judge.probability import (
    DEFAULT_PROBABILITY_VIEWS,
    answered_by_question,
    questions,
)
from rbdspy.judge.probability_judge import ProbabilityJudge
from rbdspy.judge.trajectory_text import as_judged, render_trajectory
from rbdspy.lm.usage import LmUsage
from rbdspy.loop.compiled_prompts import load_component
from rbdspy.optimizers.examples import balanced_sample
from rbdspy.optimizers.metrics import judge_report
from rbdspy.render import DEFAULT_BUDGET_TOKENS, EvidenceRenderer, estimate_tokens

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ["datasets/scienceworld-dev.jsonl", "datasets/twx-dev.jsonl"]
RENDERERS = ("legacy", "evidence")
FAMILIES = ("scienceworld", "twx")
BASELINE_ARM = "rationale+legacy"  # today's judge, shown beside a design measured on a subset
SWEEP = (0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
MAX_ABSTENTION = 0.10  # the goal; the threshold chosen on one family must keep to it
# --estimate: completion tokens per LM call, and LM calls per trajectory. The rationale's 62 is the
# measured p50 (docs/results/lm.md); the others are assumptions until this benchmark measures them.
OUTPUT_TOKENS = {
    "rationale": 62,
    "checklist": 180,
    "self-consistency": 62,
    "confidence": 70,
    "probability": 11,  # per question: the JSON answer of a one-word verdict
}
EXPECTED_SC_CALLS = 2.4  # 2 when the first two samples agree, else 3 (assumed: they agree 60% of the time)


class Arm(NamedTuple):  # a NamedTuple, not a dataclass: the smoke test loads this file without importing it
    design: str
    renderer: str  # "legacy" or "evidence-<budget>"
    compiled: str | None = None
    tuned_on: str | None = None

    @property
    def name(self) -> str:
        # The tuning family is in the name: a judge compiled on each family is its own arm.
        return f"{self.design}+{self.renderer}" + (f"+compiled-{self.tuned_on}" if self.compiled else "")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lm", default="local", help="rbdspy.make_lm spec or a LiteLLM model string")
    parser.add_argument("--adapter", choices=("json", "chat"), default="json", help="json: as the loop runs the judge")
    parser.add_argument("--data", nargs="+", default=DEFAULT_DATA)
    parser.add_argument("--limit", type=int, default=None, help="records per file (default: every record)")
    parser.add_argument("--designs", nargs="+", choices=JUDGE_DESIGNS, default=list(JUDGE_DESIGNS))
    parser.add_argument("--renderers", nargs="+", choices=RENDERERS, default=list(RENDERERS))
    parser.add_argument("--budget-tokens", type=int, default=DEFAULT_BUDGET_TOKENS)
    parser.add_argument("--samples", type=int, default=DEFAULT_SAMPLES, help="self-consistency samples")
    parser.add_argument("--temperature", type=float, default=DEFAULT_SAMPLE_TEMPERATURE)
    parser.add_argument("--threshold", type=float, default=DEFAULT_CONFIDENCE_THRESHOLD)
    parser.add_argument("--compiled", default=None, help="a compiled judge (judge.json or a compile directory)")
    parser.add_argument("--tuned-on", choices=FAMILIES, default=None, help="the family --compiled was tuned on")
    parser.add_argument("--out", default="bench-runs/judge-designs")
    parser.add_argument("--resume", action="store_true", help="keep the records already judged under --out")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", action="store_true", help="let DSPy's cache answer repeated calls")
    parser.add_argument("--estimate", action="store_true", help="print the LM time of the run and stop (no LM)")
    parser.add_argument("--prompt-rate", type=float, default=70.0, help="--estimate: prompt tokens read per second")
    parser.add_argument("--gen-rate", type=float, default=11.0, help="--estimate: tokens generated per second")
    parser.add_argument("--smoke", action="store_true", help="a scripted LM, 2 records per file")
    parser.add_argument(
        "--report-only", action="store_true", help="no LM: rewrite results.md from the records under --out"
    )
    args = parser.parse_args(argv)
    if args.compiled and not args.tuned_on:
        parser.error("--compiled needs --tuned-on (the family its compile was tuned on), for the OOD column")
    if args.smoke:
        args.lm, args.adapter, args.limit = "scripted", "chat", args.limit or 2
    return args


def arms_of(args: argparse.Namespace) -> list[Arm]:
    renderers = [r if r == "legacy" else f"evidence-{args.budget_tokens}" for r in args.renderers]
    compiled = str(Path(args.compiled).resolve()) if args.compiled else None
    return [Arm(d, r, compiled, args.tuned_on if compiled else None) for d in args.designs for r in renderers]


def load_work(paths: list[str], limit: int | None, seed: int) -> list[tuple[str, LabelledTrajectory]]:
    """(file name, record), the files' records interleaved, each file's labels alternating."""
    per_file = [
        [(Path(p).name, r) for r in balanced_sample(load_records(ROOT / p if not Path(p).is_file() else p), None, seed)]
        for p in paths
    ]
    per_file = [records[:limit] if limit else records for records in per_file]
    return [item for group in itertools.zip_longest(*per_file) for item in group if item is not None]


# The design's own options, from the command line.
DESIGN_OPTIONS = {"self-consistency": ("samples", "temperature"), "confidence": ("threshold",)}


def make_judge(arm: Arm, args: argparse.Namespace) -> BaseJudge:
    renderer = None if arm.renderer == "legacy" else EvidenceRenderer(budget_tokens=args.budget_tokens)
    options = {name: getattr(args, name) for name in DESIGN_OPTIONS.get(arm.design, ())}
    judge = judge_for(arm.design, renderer=renderer, **options)
    if arm.compiled:
        path = Path(arm.compiled)
        load_component(judge, path / "judge.json" if path.is_dir() else path)
    return judge


def demo_texts(judge: BaseJudge) -> set[str]:
    """What a compiled judge's demos show (every input but the task): a record whose own text is
    among them was the judge's example, and scoring it would flatter the compile."""
    texts = set()
    for _, predictor in judge.named_predictors():
        fields = [name for name in predictor.signature.input_fields if name != "task"]
        texts |= {str(demo[name]) for demo in predictor.demos for name in fields if name in demo}
    return texts


def shown_as_demo(judge: BaseJudge, record: LabelledTrajectory, texts: set[str]) -> bool:
    """Whether the judge was shown `record` as a demo (see `demo_texts`): the texts a compile
    would have made of it (`ProbabilityJudge.question_demos`, or the rendered trajectory for the
    designs that read it) are among them."""
    if not texts:
        return False
    trajectory = as_judged(record.trajectory)
    example = dspy.Example(task=trajectory.task, trajectory=trajectory, verdict=record.label)
    by_predictor = judge.question_demos([example]) if isinstance(judge, ProbabilityJudge) else None
    if by_predictor is None:
        shown = {render_trajectory(trajectory, trajectory.task, judge.max_chars, judge.renderer)}
    else:
        shown = {
            str(v)
            for demos in by_predictor.values()
            for d in demos
            for k, v in d.items()
            if k not in ("task", "verdict")
        }
    return bool(shown & texts)


def judge_one(arm: Arm, judge: BaseJudge, file: str, record: LabelledTrajectory) -> dict:
    trajectory = as_judged(record.trajectory)  # never show the label (an agent's own final answer is no label)
    shown = render_trajectory(trajectory, trajectory.task, judge.max_chars, judge.renderer)
    start = time.perf_counter()
    with LmUsage() as usage:
        pred = judge(task=trajectory.task, trajectory=trajectory)
    seconds = time.perf_counter() - start
    return {
        "arm": arm.name,
        **{k: v for k, v in arm._asdict().items() if k != "compiled"},
        "key": f"{file}:{trajectory.id}",
        "file": file,
        "family": record.env,
        "task_id": record.task_id,
        "kind": record.kind,
        "label": record.label,
        "verdict": pred.verdict.label,
        "raw_label": getattr(pred, "label", None),
        "confidence": getattr(pred, "confidence", None),
        "votes": getattr(pred, "votes", None),
        "probability": getattr(pred, "probability", None),
        "probabilities": getattr(pred, "probabilities", None),
        "rationale": pred.verdict.rationale[:600],
        "seconds": round(seconds, 3),
        "lm_calls": usage.calls,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "shown_tokens": estimate_tokens(shown),
    }


# ---- the run ---------------------------------------------------------------------------------


def _digest(path: str) -> str:
    file = ROOT / path if not Path(path).is_file() else Path(path)
    return hashlib.sha256(file.read_bytes()).hexdigest()[:16]


def _arm_settings(arm: Arm, args: argparse.Namespace) -> dict:
    settings = {"design": arm.design, "renderer": arm.renderer, "tuned_on": arm.tuned_on}
    if arm.design == "self-consistency":
        settings |= {"samples": args.samples, "temperature": args.temperature}
    if arm.design == "confidence":
        settings["threshold"] = args.threshold
    if arm.design == "probability":  # the questions asked; the records hold each one's P(success)
        settings["views"] = list(DEFAULT_PROBABILITY_VIEWS)
    if arm.compiled:
        settings["compiled"] = _digest(
            str(Path(arm.compiled) / "judge.json" if Path(arm.compiled).is_dir() else arm.compiled)
        )
    return settings


def _check_out(out: Path, args: argparse.Namespace, arms: list[Arm]) -> dict[str, set[str]]:
    """Creates or checks the run directory; returns the record keys already judged per arm."""
    config = {"lm": args.lm, "adapter": args.adapter, "data": {p: _digest(p) for p in args.data}, "seed": args.seed}
    config_path, arms_path, records = out / "config.json", out / "arms.json", out / "records"
    if config_path.exists() and not args.resume:
        raise SystemExit(f"{out} holds a run already: pass --resume to continue it, or another --out")
    if config_path.exists():
        saved = json.loads(config_path.read_text())
        different = sorted(k for k in config if k not in ("data", "sessions") and saved.get(k) != config[k])
        different += [f"data {p}" for p, d in config["data"].items() if saved["data"].get(p, d) != d]
        if different:
            raise SystemExit(f"--resume: {out} was run with other settings ({', '.join(different)}); use another --out")
        config["data"] = saved["data"] | config["data"]
        config["sessions"] = saved.get("sessions", [])
    # Which machine, engine build and code judged (llama.cpp's numerics differ between CPUs).
    config["sessions"] = [*config.get("sessions", []), session_info()]
    saved_arms = json.loads(arms_path.read_text()) if arms_path.exists() else {}
    for arm in arms:
        settings = _arm_settings(arm, args)
        if saved_arms.get(arm.name, settings) != settings:
            raise SystemExit(f"--resume: arm {arm.name} was run with {saved_arms[arm.name]}, not {settings}")
        saved_arms[arm.name] = settings
    records.mkdir(parents=True, exist_ok=True)
    config_path.write_text(json.dumps(config, indent=1))
    arms_path.write_text(json.dumps(saved_arms, indent=1))
    done = {}
    for arm in arms:
        path = records / f"{arm.name}.jsonl"
        done[arm.name] = {json.loads(line)["key"] for line in path.read_text().splitlines()} if path.exists() else set()
    return done


def _scripted_lm() -> dspy.BaseLM:
    from dspy.utils import DummyLM

    def answer(label: str, confidence: float, met: bool) -> dict:
        return {
            "rationale": f"scripted {label}",
            "verdict": label,
            "confidence": confidence,
            "requirements": [{"requirement": "the goal", "evidence": "the last step", "met": met}],
        }

    return DummyLM(
        itertools.cycle([answer("success", 0.9, True), answer("failure", 0.6, False), answer("failure", 0.95, True)])
    )


def _configure(args: argparse.Namespace) -> None:
    if not args.cache:
        dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
    if args.smoke:
        lm = _scripted_lm()
    else:
        from rbdspy.lm import make_lm

        lm = make_lm(args.lm)
    dspy.configure(lm=lm, adapter=dspy.JSONAdapter() if args.adapter == "json" else dspy.ChatAdapter())


def _progress(total: int):
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover
        return contextlib.nullcontext(None)
    return tqdm(total=total, desc="judged", unit="call", file=sys.stderr, disable=not sys.stderr.isatty())


def run(args: argparse.Namespace) -> Path:
    out = Path(args.out)
    arms = arms_of(args)
    judges = {arm.name: make_judge(arm, args) for arm in arms}  # a compiled file that does not fit fails here
    done = _check_out(out, args, arms)
    work = load_work(args.data, args.limit, args.seed)
    demos = {name: demo_texts(judge) for name, judge in judges.items()}
    todo = [
        (file, record, arm)
        for file, record in work
        for arm in arms
        if f"{file}:{record.trajectory.id}" not in done[arm.name]
        and not shown_as_demo(judges[arm.name], record, demos[arm.name])  # its own demos are not scored
    ]
    if not todo:
        return out
    _configure(args)
    handles = {arm.name: (out / "records" / f"{arm.name}.jsonl").open("a", encoding="utf-8") for arm in arms}
    try:
        with _progress(len(todo)) as bar:
            for file, record, arm in todo:
                row = judge_one(arm, judges[arm.name], file, record)
                handles[arm.name].write(json.dumps(row) + "\n")
                handles[arm.name].flush()
                if bar is not None:
                    bar.update(1)
    except LMSetupError as error:
        raise SystemExit(f"the LM cannot be used: {error}") from error
    finally:
        for handle in handles.values():
            handle.close()
    return out


# ---- the report ------------------------------------------------------------------------------


def read_rows(out: Path) -> list[dict]:
    return [
        json.loads(line) for path in sorted((out / "records").glob("*.jsonl")) for line in path.read_text().splitlines()
    ]


def common_rows(rows: list[dict]) -> tuple[list[dict], dict[str, int], dict[str, set[str]]]:
    """The rows of the records every arm judged, family by family (an arm judged on one family
    only, such as a judge compiled on the other, does not shrink the other family), so a
    partial run compares the arms on the same trajectories; how many records each family
    keeps; and, per family, the arms left out of that comparison because they judged fewer than
    half as many records as the arm that judged most (a design sampled on a subset for its cost:
    `partial_rows` compares it with today's judge on its own records)."""
    keys: dict[str, set[str]] = {}
    partial: dict[str, set[str]] = {}
    for family in sorted({r["family"] for r in rows}):  # the records may hold another family too
        per_arm = {
            arm: {r["key"] for r in rows if r["arm"] == arm and r["family"] == family}
            for arm in sorted({r["arm"] for r in rows if r["family"] == family})
        }
        most = max((len(k) for k in per_arm.values()), default=0)
        partial[family] = {arm for arm, k in per_arm.items() if 2 * len(k) < most}
        complete = [k for arm, k in per_arm.items() if arm not in partial[family]]
        keys[family] = set.intersection(*complete) if complete else set()
    kept = [r for r in rows if r["key"] in keys[r["family"]] and r["arm"] not in partial[r["family"]]]
    return kept, {family: len(k) for family, k in keys.items()}, partial


def at_band(rows: list[dict], band: tuple[float, float]) -> list[dict]:
    """The probability design's rows with their verdicts at `band`, from the recorded P(success)
    (no LM): a run judged at one band is reported at the band chosen later on train records."""
    low, high = band
    out = []
    for row in rows:
        p = row.get("probability")
        if row["design"] != "probability" or p is None:  # another design, or a call that failed
            out.append(row)
            continue
        verdict = "indeterminate" if low <= p < high else ("success" if p >= high else "failure")
        out.append({**row, "verdict": verdict})
    return out


def partial_rows(rows: list[dict], partial: dict[str, set[str]]) -> list[dict]:
    """Each partial arm's rows, with today's judge's (BASELINE_ARM) on the same records."""
    out = []
    for family, arms in partial.items():
        for arm in sorted(arms):
            mine = [r for r in rows if r["arm"] == arm and r["family"] == family]
            keys = {r["key"] for r in mine}
            baseline = [r for r in rows if r["arm"] == BASELINE_ARM and r["key"] in keys]
            if len(baseline) == len(mine):
                beside = f"rationale (today's, on {arm}'s records)"
                out += mine + [{**r, "arm": f"{BASELINE_ARM} (beside {arm})", "design": beside} for r in baseline]
    return out


def summarise(rows: list[dict]) -> list[dict]:
    """One line per arm and family evaluated on (and per arm over both families)."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        groups[(row["arm"], row["family"])].append(row)
        groups[(row["arm"], "both")].append(row)
    table = []
    for (arm, family), group in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] == "both", kv[0][1])):
        first = group[0]
        report = judge_report([r["label"] for r in group], [r["verdict"] for r in group])
        tuned_on = first.get("tuned_on")
        ood = "—" if not tuned_on or family == "both" else ("yes" if tuned_on != family else "no")
        table.append(
            {
                "arm": arm,
                "design": first["design"],
                "renderer": first["renderer"],
                "judge": "compiled" if tuned_on else "hand-written",
                "tuned_on": tuned_on or "—",
                "family": family,
                "ood": ood,
                "n": len(group),
                "balanced_accuracy": report["balanced_accuracy"],
                "false_success_rate": report["false_success_rate"],
                "false_failure_rate": report["false_failure_rate"],
                "abstention_rate": report["indeterminate_rate"],
                **{
                    key: statistics.mean(r[key] for r in group)
                    for key in ("seconds", "prompt_tokens", "completion_tokens", "lm_calls", "shown_tokens")
                },
            }
        )
    return table


COLUMNS = ("design", "renderer", "judge", "tuned on", "evaluated on", "OOD", "n", "balanced acc", "false success",
           "false failure", "abstain", "s/traj", "tokens/traj (prompt+gen)", "LM calls/traj",
           "trajectory tokens shown")  # fmt: skip
RATES = ("balanced_accuracy", "false_success_rate", "false_failure_rate", "abstention_rate")
SWEPT_RATES = ("balanced_accuracy", "false_success_rate", "false_failure_rate", "indeterminate_rate")


def markdown(table: list[dict]) -> str:
    rows = [
        [
            *(t[key] for key in ("design", "renderer", "judge", "tuned_on", "family", "ood", "n")),
            *(tables.pct(t[rate], 1) for rate in RATES),
            f"{t['seconds']:.1f}",
            f"{t['prompt_tokens']:.0f}+{t['completion_tokens']:.0f}",
            f"{t['lm_calls']:.2f}",
            f"{t['shown_tokens']:.0f}",
        ]
        for t in table
    ]
    return tables.table(COLUMNS, rows, align="l" * 6 + "r" * 9)


def _thresholded(rows: list[dict], threshold: float) -> dict:
    labels = [
        r["raw_label"]
        if r["raw_label"] and r["confidence"] is not None and r["confidence"] >= threshold
        else "indeterminate"
        for r in rows
    ]
    return judge_report([r["label"] for r in rows], labels)


def confidence_sweep(rows: list[dict]) -> str:
    """The confidence arms at other thresholds (no LM: raw labels and confidences are on
    record), and a threshold chosen on one family (best balanced accuracy with at most 10%
    abstentions) reported on the other."""
    arms = sorted({r["arm"] for r in rows if r["design"] == "confidence"})
    if not arms:
        return ""
    lines, chosen = [], []
    for arm in arms:
        families = sorted({r["family"] for r in rows})
        by_family = {f: [r for r in rows if r["arm"] == arm and r["family"] == f] for f in families}
        for family, group in by_family.items():
            for t in SWEEP if group else ():
                rep = _thresholded(group, t)
                lines.append([arm, family, f"{t:.2f}", *(tables.pct(rep[rate], 1) for rate in SWEPT_RATES)])
        for tuned, other in itertools.permutations(families, 2):
            if not by_family[tuned] or not by_family[other]:
                continue
            reports = [(t, _thresholded(by_family[tuned], t)) for t in SWEEP]
            allowed = [(t, r) for t, r in reports if r["indeterminate_rate"] <= MAX_ABSTENTION] or reports[:1]
            best = max(allowed, key=lambda tr: (tr[1]["balanced_accuracy"], -tr[0]))[0]
            rep = _thresholded(by_family[other], best)
            rates = ("balanced_accuracy", "false_success_rate", "indeterminate_rate")
            chosen.append([arm, tuned, f"{best:.2f}", f"{other} (OOD)", *(tables.pct(rep[r], 1) for r in rates)])
    swept = ["arm", "evaluated on", "threshold", "balanced acc", "false success", "false failure", "abstain"]
    across = ["arm", "threshold chosen on", "threshold", "evaluated on", "balanced acc", "false success", "abstain"]
    return "\n".join(["### Confidence thresholds (swept on the recorded answers, no LM)", "",
                      tables.table(swept, lines, align="llrrrrr"), "",
                      "### A threshold chosen on one family, reported on the other", "",
                      tables.table(across, chosen, align="llrlrrr")])  # fmt: skip


def reproduce_command(args: argparse.Namespace) -> str:
    parts = []
    if args.smoke:
        parts.append("--smoke")
    else:
        parts += [f"--lm {args.lm}", f"--adapter {args.adapter}"]
    if args.data != DEFAULT_DATA:
        parts.append("--data " + " ".join(args.data))
    if args.limit and not args.smoke:
        parts.append(f"--limit {args.limit}")
    if args.designs != list(JUDGE_DESIGNS):
        parts.append("--designs " + " ".join(args.designs))
    if args.renderers != list(RENDERERS):
        parts.append("--renderers " + " ".join(args.renderers))
    for flag, value, default in (
        ("--budget-tokens", args.budget_tokens, DEFAULT_BUDGET_TOKENS),
        ("--samples", args.samples, DEFAULT_SAMPLES),
        ("--temperature", args.temperature, DEFAULT_SAMPLE_TEMPERATURE),
        ("--threshold", args.threshold, DEFAULT_CONFIDENCE_THRESHOLD),
    ):
        if value != default:
            parts.append(f"{flag} {value}")
    if args.compiled:
        parts.append(f"--compiled {args.compiled} --tuned-on {args.tuned_on}")
    parts += [f"--out {args.out}", "--resume"]
    return tables.benchmark_command("judge_designs", *parts)


def report(args: argparse.Namespace, out: Path) -> dict:
    every = at_band(read_rows(out), DEFAULT_PROBABILITY_BAND)
    rows, per_family, partial = common_rows(every)
    records = ", ".join(f"{n} {family}" for family, n in per_family.items())
    table = summarise(rows)
    subset = summarise(partial_rows(every, partial))
    left_out = len(every) - len(rows) - sum(1 for r in every if r["arm"] in partial[r["family"]])
    text = "\n".join([
        f"## Judge designs x renderers ({len(every)} judgements under {out}, lm {args.lm}, {args.adapter} adapter)", "",
        f"Every arm on the same records: {records} (the ones every arm evaluated on that family judged; "
        f"{left_out} judgements of records not every arm has reached are left out).", "",
        markdown(table), "",
        *(["### Designs measured on a subset (for their cost), each beside today's judge on the same records", "",
           markdown([t for t in subset if t["family"] != "both"]), ""] if subset else []),
        confidence_sweep(rows), "",
        f"The probability design's verdicts are at its shipped band {list(DEFAULT_PROBABILITY_BAND)} (chosen on train "
        "records: benchmarks/judge_probability_band.py), from the P(success) each record holds. "
        "Balanced accuracy counts an abstention as wrong; false success = failures judged success / failures; "
        "false failure = successes judged failure / successes; OOD = evaluated on a family the judge was not tuned on.",
        tables.reproduce_line(reproduce_command(args)),
    ])  # fmt: skip
    (out / "results.md").write_text(text + "\n")
    (out / "results.json").write_text(json.dumps(table, indent=1))
    print(text)
    return {"rows": rows, "table": table, "markdown": text}


# ---- the LM time a run would take --------------------------------------------------------------


def _questions(judge: BaseJudge, trajectory) -> list[tuple[type, dict]]:
    """(signature, inputs) of each distinct prompt a judge sends for one trajectory: the
    probability design asks its short questions (`questions`, each distinct prompt once); every
    other design reads the rendered trajectory once."""
    if isinstance(judge, ProbabilityJudge):
        asked = questions(trajectory.task, trajectory, "", judge.views)
        return [
            (getattr(judge, PROBABILITY_PREDICTORS[asked[q][0]]).signature, asked[q][1])
            for q in dict.fromkeys(answered_by_question(asked).values())
        ]
    rendered = render_trajectory(trajectory, trajectory.task, judge.max_chars, judge.renderer)
    return [(next(p for _, p in judge.named_predictors()).signature, {"task": trajectory.task, "trajectory": rendered})]


def estimate(args: argparse.Namespace) -> list[dict]:
    """Prompt tokens of every call the run would make (the adapter's real messages, counted by
    estimate_tokens), output tokens and calls as OUTPUT_TOKENS / EXPECTED_SC_CALLS assume, and
    the hours at --prompt-rate / --gen-rate. Self-consistency reads its prompt once: the engine
    keeps the prompt's KV cache, so a repeated prompt costs only its generation."""
    adapter = dspy.JSONAdapter() if args.adapter == "json" else dspy.ChatAdapter()
    work = load_work(args.data, args.limit, args.seed)
    table = []
    for arm in arms_of(args):
        judge = make_judge(arm, args)
        prompt, asked = 0, 0
        for _, record in work:
            trajectory = as_judged(record.trajectory)
            for signature, inputs in _questions(judge, trajectory):
                messages = adapter.format(signature, demos=[], inputs=inputs)
                prompt += estimate_tokens("".join(m["content"] for m in messages))
                asked += 1
        n = len(work)
        calls = EXPECTED_SC_CALLS if arm.design == "self-consistency" else asked / n
        generated = OUTPUT_TOKENS[arm.design] * calls  # probability: per question
        seconds = prompt / n / args.prompt_rate + generated / args.gen_rate
        table.append({"arm": arm.name, "n": n, "prompt_tokens": prompt / n, "output_tokens": generated,
                      "calls": calls, "seconds": seconds, "hours": seconds * n / 3600})  # fmt: skip
    print(
        f"## Estimated LM time: {len(work)} trajectories, "
        f"{args.prompt_rate:g} prompt tok/s, {args.gen_rate:g} gen tok/s\n"
    )
    header = ["arm", "trajectories", "prompt tokens/traj", "output tokens/traj", "LM calls/traj", "s/traj", "hours"]
    rows = [[t["arm"], t["n"], f"{t['prompt_tokens']:.0f}", f"{t['output_tokens']:.0f}", f"{t['calls']:.3g}",
             f"{t['seconds']:.0f}", f"{t['hours']:.1f}"] for t in table]  # fmt: skip
    print(tables.table(header, rows, align="lrrrrrr"))
    total = sum(t["hours"] for t in table)
    print(f"\nAll arms: {total:.1f} hours ({math.ceil(total / 8)} sessions of 8 hours).")
    return table


def main(argv: list[str] | None = None) -> dict | list[dict]:
    args = parse_args(argv)
    if args.estimate:
        return estimate(args)
    out = Path(args.out) if args.report_only else run(args)
    return report(args, out)


if __name__ == "__main__":
    main()
