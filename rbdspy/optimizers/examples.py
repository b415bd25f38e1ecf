"""Labelled trajectory records -> `dspy.Example`s for the judge and for the extractors.

The inputs of an example are exactly what the module sees at run time (task and the trajectory
rendered by the module's own `render_trajectory`, with the same `renderer` the module is built
with: None for `Trajectory.render(max_chars)`, or a token budget / EvidenceRenderer), so a
compiled prompt is tuned on the text it will later read, and its demos are the compressed
trajectories a judge with that renderer is shown. Everything else on the example (label,
provenance, cause and where it is, environment score, literals) is for the metric and its
feedback, never shown to the program.

The judge's input drops the trajectory's `final_answer`: trajectories recorded from an
environment end with the environment's score ("score 100/100", or the agent's
"... success, score ...") and a judge compiled on that line would learn to read the label
instead of the evidence. A final answer the agent wrote itself (how it stopped: what the bank's
judge reads in the loop, marked in the trajectory's metadata by `rbdspy data from-bench`) is kept
(`rbdspy.judge.trajectory_text.as_judged`). Pass `hide_outcome=False` to keep any.
"""

from __future__ import annotations

import glob
import hashlib
import random
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import dspy

from rbdspy.core.roles import AGENT_ROLE, ASSISTANT_ROLE
from rbdspy.datasets.dataset import LabelledTrajectory, load_records
from rbdspy.judge.trajectory_text import as_judged, render_trajectory
from rbdspy.optimizers.literals import action_verbs, trajectory_literals
from rbdspy.render import as_renderer

DEFAULT_MAX_CHARS = 6000
AGENT_ROLES = (AGENT_ROLE, ASSISTANT_ROLE)


def expand_paths(patterns: Iterable[str | Path]) -> list[Path]:
    """Files named by `patterns` (paths or globs; a comma-separated string is split), sorted and
    without repeats. A pattern that matches nothing raises FileNotFoundError."""
    out: list[Path] = []
    for pattern in patterns:
        for part in str(pattern).split(","):
            part = part.strip()
            if not part:
                continue
            matches = sorted(glob.glob(part)) if glob.has_magic(part) else ([part] if Path(part).is_file() else [])
            if not matches:
                raise FileNotFoundError(
                    f"no dataset file matches {part!r} (give JSONL paths or globs, e.g. datasets/*-train.jsonl)"
                )
            out.extend(Path(m) for m in matches)
    return sorted(set(out), key=str)


def load_labelled(patterns: Iterable[str | Path]) -> list[LabelledTrajectory]:
    """Every record of every file the patterns name, in file order."""
    records: list[LabelledTrajectory] = []
    for path in expand_paths(patterns):
        records.extend(load_records(path))
    return records


def files_digest(paths: Sequence[str | Path]) -> str:
    """SHA-256 (first 16 hex digits) over the files' names and bytes: which data a compile saw."""
    h = hashlib.sha256()
    for path in sorted(str(p) for p in paths):
        h.update(Path(path).name.encode())
        h.update(Path(path).read_bytes())
    return h.hexdigest()[:16]


def balanced_sample(
    records: Sequence[LabelledTrajectory], limit: int | None, seed: int = 0
) -> list[LabelledTrajectory]:
    """At most `limit` records, alternating success and failure as long as both last (so a
    small subset is balanced even when the file is not), each label shuffled with `seed`.
    `limit=None` keeps every record (still shuffled, labels interleaved)."""
    rng = random.Random(seed)
    by_label: dict[str, list[LabelledTrajectory]] = {"success": [], "failure": []}
    for record in records:
        by_label[record.label].append(record)
    for group in by_label.values():
        rng.shuffle(group)
    out: list[LabelledTrajectory] = []
    successes, failures = by_label["success"], by_label["failure"]
    for i in range(max(len(successes), len(failures))):
        for group in (successes, failures):
            if i < len(group):
                out.append(group[i])
    return out if limit is None else out[:limit]


def _score_text(record: LabelledTrajectory) -> str:
    meta = record.trajectory.metadata
    if "final_score" in meta and "max_score" in meta:
        return f"{meta['final_score']:g}/{meta['max_score']:g}"
    return ""


def cause_location(record: LabelledTrajectory) -> str:
    """Where a broken gold path was broken, by the `[i]` step numbers every rendering of the
    trajectory shows (so GEPA's reflection can point at the step), e.g. "steps [3] ('b') and
    [5] ('a') are in the wrong order". "" for a record without a cause, or when the recorded
    actions do not line up with the cause (a hand-edited record): no location beats a wrong one."""
    cause = record.cause
    if cause is None:
        return ""
    steps = record.trajectory.steps
    at = [i for i, step in enumerate(steps) if step.role in AGENT_ROLES]
    actions = [steps[i].content.strip() for i in at]
    k, quoted = cause.index, ", ".join(repr(a) for a in cause.actions)
    if record.kind == "gold_truncated" and len(actions) == k:
        if not at:
            return f"the trajectory ends before any action; the first needed action, {quoted}, was never taken"
        return (
            f"the trajectory ends after step [{at[-1]}] ({actions[-1]!r}); "
            f"the next needed action, {quoted}, was never taken"
        )
    # A dropped step: the actions are the gold path without it (or the start of that, when the
    # episode ended early), so the gap is just before the k-th action.
    if record.kind == "gold_step_dropped" and k <= len(actions) <= cause.gold_length - 1:
        if k < len(actions):
            return f"{quoted} should have come just before step [{at[k]}] ({actions[k]!r}) and was never taken"
        if at:
            return f"{quoted} should have come after step [{at[-1]}] ({actions[-1]!r}) and was never taken"
        return f"the trajectory has no action: {quoted} was never taken"
    if record.kind == "gold_step_swapped" and len(cause.actions) == 2 and k < len(actions):
        first, second = cause.actions
        if actions[k + 1 : k + 2] == [first] and actions[k] == second:
            return (
                f"steps [{at[k]}] ({second!r}) and [{at[k + 1]}] ({first!r}) are in the wrong order: "
                f"{first!r} had to come first"
            )
        if k + 1 == len(actions) and actions[k] == second:  # the episode ended on the early step
            return f"step [{at[k]}] ({second!r}) came too early: {first!r} had to come first and never came"
    return ""


def _metadata(record: LabelledTrajectory) -> dict:
    trajectory = record.trajectory
    actions = [s.content for s in trajectory.steps if s.role in AGENT_ROLES]
    observations = [s.content for s in trajectory.steps if s.role not in AGENT_ROLES]
    return {
        "label": record.label,
        "kind": record.kind,
        "cause": record.cause.describe(record.kind) if record.cause else "",
        "cause_actions": list(record.cause.actions) if record.cause else [],
        "cause_location": cause_location(record),
        "env_score": _score_text(record),
        "env": record.env,
        "task_id": record.task_id,
        "task_type": record.task_type,
        "literals": trajectory_literals(trajectory.task, actions, observations),
        "verbs": action_verbs(actions),
    }


def judge_example(
    record: LabelledTrajectory,
    max_chars: int = DEFAULT_MAX_CHARS,
    hide_outcome: bool = True,
    renderer: Any = None,
    *,
    keep_steps: bool = False,
) -> dspy.Example:
    """Inputs `task`, `trajectory` (rendered as `Judge(max_chars, renderer=renderer)` renders
    it; with `keep_steps`, the Trajectory itself, for a judge design that reads its steps, such
    as the probability design's last steps); `verdict` is the environment's label, so labelled
    demos show the right answer."""
    trajectory = record.trajectory
    if hide_outcome:
        trajectory = as_judged(trajectory)
    shown = (
        trajectory if keep_steps else render_trajectory(trajectory, trajectory.task, max_chars, as_renderer(renderer))
    )
    return dspy.Example(task=trajectory.task, trajectory=shown, verdict=record.label, **_metadata(record)).with_inputs(
        "task", "trajectory"
    )


def extractor_example(
    record: LabelledTrajectory, max_chars: int = DEFAULT_MAX_CHARS, renderer: Any = None
) -> dspy.Example:
    """Inputs `task`, `trajectory` (rendered as `Extractor(max_chars=max_chars,
    renderer=renderer)` renders it), `verdict` (the environment's label: the extractor is tuned
    on correctly routed trajectories, the judge's errors are the judge's compile)."""
    trajectory = record.trajectory
    text = render_trajectory(trajectory, trajectory.task, max_chars, as_renderer(renderer))
    facts = {"facts": world_facts_of(record)} if record.env == "textworld" else {}
    return dspy.Example(
        task=trajectory.task, trajectory=text, verdict=record.label, **_metadata(record), **facts
    ).with_inputs("task", "trajectory", "verdict")


def world_facts_of(record: LabelledTrajectory):
    """The facts of the persistent world a TextWorld house record was played in (its task type
    is the world's seed), which the extractor metric checks lessons' claims against; None for a
    record of a world of its own (a shuffled stream's)."""
    from rbdspy.envs.textworld_env import world_facts  # optional: textworld (the envs extra)

    return world_facts(int(record.task_type)) if record.task_type.isdigit() else None


def make_examples(
    target: str,
    records: Sequence[LabelledTrajectory],
    max_chars: int = DEFAULT_MAX_CHARS,
    renderer: Any = None,
    *,
    design: str | None = None,
) -> list[dspy.Example]:
    """One example per record, rendered with `renderer` (see the module docstring): pass the
    renderer the compiled program will run with. A judge of the probability `design` reads the
    trajectory's steps, so its examples carry the Trajectory (outcome hidden) instead of text."""
    renderer = as_renderer(renderer)  # an int becomes one EvidenceRenderer, shared by every record
    if target == "judge":
        keep = design == "probability"
        return [judge_example(r, max_chars, renderer=renderer, keep_steps=keep) for r in records]
    if target == "extractors":
        return [extractor_example(r, max_chars, renderer=renderer) for r in records]
    raise ValueError(f"target must be 'judge' or 'extractors'; got {target!r}")
