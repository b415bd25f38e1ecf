"""Build a labelled-trajectory dataset from a real environment, every label checked by replay.

Why: the judge and the extractors are compiled against trajectories whose labels must be true.
Here a label is never an opinion: it is the environment's score. Successes are gold paths (and
agent rollouts that succeed); failures are agent rollouts that fail and gold paths broken on
purpose: truncated, one step dropped, or two adjacent steps swapped. A perturbation does not
always break a task (dropping a "look around" changes nothing), so each candidate is played and
kept only when the environment confirms the failure, with the cause recorded.

Then every record, whatever its origin, is replayed once more from a fresh reset before it is
written; one whose replay does not give the same label is discarded and counted
(`BuildReport.discarded`). ScienceWorld needs this: on a few tasks (electrical circuits,
pollination) the same actions win a step earlier or later, or not at all, from one replay to the
next.

Determinism: the task order, the perturbation choices and the trajectory ids derive from the
seed; the gold paths come from the simulators' gold agents, which are not reproducible across
processes on some tasks, so pin them with the adapter's `gold_cache` file. With both, a
TextWorld-Express build is byte-identical from one run to the next. A ScienceWorld build picks the
same tasks and perturbations, but the simulator itself varies between JVMs: a room's objects can
be listed in another order, and a few tasks do not replay identically (seen on grow-fruit and
power-component), so a record can be discarded in one run and kept in another. Agent rollouts are as deterministic as
the LM.

Task types are interleaved (one task of each type before a second of any) and each task gives as
many failures as successes, so the file is balanced and varied at any size.
"""

from __future__ import annotations

import contextlib
import hashlib
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from rbdspy.datasets.dataset import PERTURBED_KINDS, Cause, LabelledTrajectory, ProvenanceKind
from rbdspy.envs.base import Environment, Split, TaskRef, actions_of, interleave, play
from rbdspy.types import Trajectory

DEFAULT_MAX_ATTEMPTS = 6


class BuildReport(BaseModel):
    """What `build_dataset` wrote and what it threw away, and why."""

    env: str
    split: str
    out_path: str
    requested: int
    written: int = 0
    successes: int = 0
    failures: int = 0
    by_kind: dict[str, int] = Field(default_factory=dict)
    discarded: dict[str, int] = Field(default_factory=dict)
    tasks_used: int = 0
    seconds: float = 0.0
    seconds_by_kind: dict[str, float] = Field(default_factory=dict)

    @property
    def records_per_minute(self) -> float:
        return 60.0 * self.written / self.seconds if self.seconds > 0 else 0.0

    def records_per_minute_by_kind(self) -> dict[str, float]:
        """Written records per minute of the time spent making that kind (gold: generating,
        playing and re-checking gold paths; perturbed kinds: every attempt, kept or not)."""
        return {k: 60.0 * self.by_kind.get(k, 0) / t for k, t in self.seconds_by_kind.items() if t > 0}

    @property
    def discarded_total(self) -> int:
        return sum(self.discarded.values())


def replay(env: Environment, task: TaskRef, actions: Sequence[str]) -> Trajectory:
    """Plays `actions` from a fresh reset (the re-check every record passes before writing)."""
    return play(env, task, actions)


def _record_id(seed: int, task: TaskRef, kind: str, actions: Sequence[str]) -> str:
    digest = hashlib.sha1(f"{seed}|{task.id}|{kind}|{chr(30).join(actions)}".encode()).hexdigest()
    return digest[:32]


def _perturb(
    kind: ProvenanceKind, gold: list[str], rng: random.Random, looks: tuple[str, ...] = ()
) -> tuple[list[str], Cause] | None:
    """One random perturbation of `gold`, or None when the path is too short for it. An action
    that only looks (`looks`, the environment's `ActionLanguage.looks`) is never the one dropped:
    dropping it cannot make the task fail."""
    n = len(gold)
    if kind == "gold_truncated":
        if n < 2:
            return None
        keep = rng.randrange(1, n)
        return gold[:keep], Cause(index=keep, actions=[gold[keep]], gold_length=n)
    if kind == "gold_step_dropped":
        candidates = [i for i, a in enumerate(gold) if not a.lower().startswith(looks)]
        if not candidates:
            return None
        i = rng.choice(candidates)
        return gold[:i] + gold[i + 1 :], Cause(index=i, actions=[gold[i]], gold_length=n)
    if kind == "gold_step_swapped":
        candidates = [i for i in range(n - 1) if gold[i] != gold[i + 1]]
        if not candidates:
            return None
        i = rng.choice(candidates)
        swapped = gold[:i] + [gold[i + 1], gold[i]] + gold[i + 2 :]
        return swapped, Cause(index=i, actions=[gold[i], gold[i + 1]], gold_length=n)
    raise ValueError(f"unknown perturbation {kind!r}; known: {', '.join(PERTURBED_KINDS)}")


def _ordered_tasks(
    env: Environment, split: Split, task_types: Sequence[str] | None, rng: random.Random
) -> list[TaskRef]:
    """Each type's tasks shuffled by the seed, then interleaved across types."""
    types = list(task_types) if task_types is not None else env.task_types()
    groups = []
    for task_type in types:
        refs = env.tasks(split, [task_type])
        rng.shuffle(refs)
        groups.append(refs)
    return interleave(groups)


class _Builder:
    def __init__(self, env, split, n, out_path, agent, seed, task_types, perturbations, max_attempts, gold=True):
        if n < 1:
            raise ValueError(f"n must be at least 1; got {n}")
        if not gold and agent is None:
            raise ValueError("gold=False leaves only agent rollouts: pass an agent (e.g. EnvAgent on an LM)")
        unknown = [k for k in perturbations if k not in PERTURBED_KINDS]
        if unknown:
            raise ValueError(f"unknown perturbation kind(s) {unknown}; known: {', '.join(PERTURBED_KINDS)}")
        self.env, self.split, self.n, self.agent, self.seed = env, split, n, agent, seed
        self.out_path = Path(out_path)
        self.task_types = task_types
        self.perturbations = list(perturbations)
        self.max_attempts = max_attempts
        self.rng = random.Random(seed)
        self.gold = gold
        # Gold builds balance labels by construction; agent-only builds keep every rollout the
        # environment labels, since what an LM agent fails at is the point of recording them.
        self.want_success = (n + 1) // 2 if gold else n
        self.want_failure = n // 2 if gold else n
        self.report = BuildReport(env=env.name, split=split, out_path=str(self.out_path), requested=n)
        self.discarded: Counter[str] = Counter()
        self.by_kind: Counter[str] = Counter()
        self.seconds_by_kind: Counter[str] = Counter()
        self._rotation = 0

    @contextlib.contextmanager
    def timed(self, kind: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds_by_kind[kind] += time.perf_counter() - start

    # -- quotas ---------------------------------------------------------------------------

    def room(self, label: str) -> bool:
        if label == "success":
            return self.report.successes < self.want_success
        return self.report.failures < self.want_failure

    def full(self) -> bool:
        if self.report.written >= self.n:
            return True
        return not self.room("success") and not self.room("failure")

    # -- records --------------------------------------------------------------------------

    def make(
        self, task: TaskRef, trajectory: Trajectory, kind: ProvenanceKind, cause: Cause | None
    ) -> LabelledTrajectory:
        trajectory = trajectory.model_copy(update={"id": _record_id(self.seed, task, kind, actions_of(trajectory))})
        return LabelledTrajectory(
            trajectory=trajectory,
            label="success" if trajectory.outcome else "failure",
            kind=kind,
            cause=cause,
            env=self.env.name,
            task_id=task.id,
            task_type=task.task_type,
            split=task.split,
        )

    def accept(self, record: LabelledTrajectory, fh) -> bool:
        """Re-check by replay, then write. Returns whether the record was written."""
        if not self.room(record.label) or self.full():
            return False
        again = replay(self.env, TaskRef.parse(record.task_id), record.actions)
        if bool(again.outcome) != record.success:
            self.discarded["not_reproduced"] += 1
            return False
        fh.write(record.model_dump_json() + "\n")
        fh.flush()
        self.report.written += 1
        if record.success:
            self.report.successes += 1
        else:
            self.report.failures += 1
        self.by_kind[record.kind] += 1
        return True

    # -- one task -------------------------------------------------------------------------

    def agent_record(self, task: TaskRef) -> LabelledTrajectory | None:
        try:
            pred = self.agent(task=self.env.describe(task), task_id=task.id)
            trajectory = Trajectory.coerce(getattr(pred, "trajectory", None))
        except Exception:
            self.discarded["agent_error"] += 1
            return None
        if trajectory.outcome is None:
            self.discarded["agent_no_outcome"] += 1
            return None
        return self.make(task, trajectory, "agent", None)

    def failures_from_gold(self, task: TaskRef, gold: list[str], wanted: int, fh) -> None:
        kinds = self.perturbations
        got = attempts = 0
        while got < wanted and attempts < self.max_attempts and self.room("failure") and kinds:
            kind = kinds[(self._rotation + attempts) % len(kinds)]
            attempts += 1
            with self.timed(kind):
                made = _perturb(kind, gold, self.rng, tuple(self.env.language.looks))
                if made is None:
                    self.discarded["perturbation_impossible"] += 1
                    continue
                actions, cause = made
                trajectory = play(self.env, task, actions)
                if trajectory.outcome:
                    self.discarded["perturbation_still_succeeds"] += 1
                    continue
                if self.accept(self.make(task, trajectory, kind, cause), fh):
                    got += 1
        self._rotation += 1

    def task(self, task: TaskRef, fh) -> None:
        successes = failures = 0
        if self.agent is not None:
            with self.timed("agent"):
                record = self.agent_record(task)
                if record is not None and self.accept(record, fh):
                    successes += record.success
                    failures += not record.success
        if not self.gold:
            return
        with self.timed("gold"):
            gold_run = play(self.env, task, self.env.gold_path(task))
            if not gold_run.outcome:
                # A gold path the environment does not score as a success is no reference:
                # neither a success record nor a base for perturbed failures.
                self.discarded["gold_failed"] += 1
                return
            if self.room("success") and self.accept(self.make(task, gold_run, "gold", None), fh):
                successes += 1
        # As many failures as this task gave successes (at least one), so every task type
        # contributes both labels. Perturbations start from the gold actions actually played
        # (a gold path may go on after the task is won; cutting that tail breaks nothing).
        wanted = max(successes - failures, 1 if failures == 0 else 0)
        if wanted and self.room("failure"):
            self.failures_from_gold(task, actions_of(gold_run), wanted, fh)

    def run(self, progress: bool) -> BuildReport:
        start = time.perf_counter()
        tasks = _ordered_tasks(self.env, self.split, self.task_types, self.rng)
        self.out_path.parent.mkdir(parents=True, exist_ok=True)
        with (
            self.out_path.open("w", encoding="utf-8") as fh,
            _progress_bar(progress, self.n, self.env.name, self.split) as advance,
        ):
            for task in tasks:
                if self.full() or (not self.room("success") and self.agent is None and not self.perturbations):
                    break  # done, or nothing left that could fill the remaining quota
                before = self.report.written
                self.report.tasks_used += 1
                self.task(task, fh)
                advance(self.report.written - before, sum(self.discarded.values()))
        self.report.by_kind = dict(sorted(self.by_kind.items()))
        self.report.discarded = dict(sorted(self.discarded.items()))
        self.report.seconds_by_kind = {k: round(v, 3) for k, v in sorted(self.seconds_by_kind.items())}
        self.report.seconds = time.perf_counter() - start
        return self.report


class _progress_bar:
    """A rich progress bar over records written (a no-op when disabled)."""

    def __init__(self, enabled: bool, total: int, env: str, split: str):
        self.enabled, self.total, self.label = enabled, total, f"{env}/{split}"
        self._progress = None

    def __enter__(self) -> Callable[[int, int], None]:
        if not self.enabled:
            return lambda written, discarded: None
        # rich's console and progress bar (~45 ms of imports) load only when a bar is drawn, not with rbdspy.envs.
        from rich.console import Console  # heavy: rich.console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn  # heavy: rich

        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("discarded {task.fields[discarded]}"),
            TimeElapsedColumn(),
            console=Console(stderr=True),  # stdout stays free for the caller's output
        )
        self._progress.start()
        bar = self._progress.add_task(f"building {self.label}", total=self.total, discarded=0)

        def advance(written: int, discarded: int) -> None:
            self._progress.update(bar, advance=written, discarded=discarded)

        return advance

    def __exit__(self, *exc: Any) -> None:
        if self._progress is not None:
            self._progress.stop()


def build_dataset(
    env: Environment,
    split: Split,
    n: int,
    out_path: str | Path,
    agent: Any = None,
    seed: int = 0,
    progress: bool = True,
    *,
    task_types: Sequence[str] | None = None,
    perturbations: Sequence[ProvenanceKind] = PERTURBED_KINDS,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    gold: bool = True,
) -> BuildReport:
    """Writes up to `n` labelled trajectories (about half successes, half failures) from
    `split` of `env` to `out_path` (JSONL, overwritten) and returns the report.

    Args:
        agent: optional agent called as `agent(task=<description>, task_id=<id>)` (an
            `EnvAgent`); its rollouts are labelled by the environment and re-checked like the rest.
        seed: fixes the task order and the perturbations (pin the gold paths too with the
            adapter's `gold_cache` for reproducible rebuilds; see the module docstring).
        task_types: restrict to these task types (default: all, interleaved).
        perturbations: which broken-gold kinds to use for failures.
        max_attempts: perturbations tried per task before giving up on a failure from it.
        gold: False writes agent rollouts only (needs `agent`), one per task, whatever their
            label, until `n` are written: no gold paths, no perturbations, no label balancing.

    Fewer than `n` records are written when the split runs out of tasks; the report says how
    many of each label and kind were written, and what was discarded and why.
    """
    builder = _Builder(env, split, n, out_path, agent, seed, task_types, perturbations, max_attempts, gold)
    return builder.run(progress)
