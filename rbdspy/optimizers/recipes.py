"""One compile recipe per optimizer, each mapping an explicit budget of *metric calls* (one
metric call = one run of the program on one example, scored) onto the optimizer's own knobs.

The mappings, and what each costs on top of the budget:

- gepa: `max_metric_calls = budget`, enforced by GEPA itself between iterations (so the last
  iteration can overshoot by at most its own calls: 2 x 3 minibatch + n_val). GEPA scores its validation split
  (`n_val = clamp(budget // 4, 2, available)` train examples held out from reflection) once at
  the start, then per iteration 2 x 3 minibatch calls (+ n_val when a candidate improves). On top:
  one reflection-LM call per iteration (about budget / 6), and the metric is called again for
  feedback on the examples reflected on (no program run).
- miprov2 (zero-shot instructions, auto=None): with `num_candidates = 3`, bootstrapping the
  two demo sets that inform the proposer runs the program on at most `n_boot` examples each
  (`n_boot = clamp(budget // 8, 1, available)`), then the default program and each of
  `num_trials` candidates are scored on `n_val` examples: calls <= 2 * n_boot + n_val *
  (num_trials + 1) <= budget. On top: one proposer-LM call per instruction candidate (3 per
  predictor). The data- and program-aware proposers are off: on a small local model they add
  many long calls for little gain.
- bootstrap (BootstrapFewShot): runs the program on the first `budget` train examples at most,
  stopping once `max_demos` demos pass the metric threshold: calls <= budget.
- labeled (LabeledFewShot): `max_demos` labelled examples as demos; no LM and no metric calls
  (the budget is unused). Judge only: the extractors have no gold lessons to show. The
  probability judge's predictors each get the question they ask of those examples
  (`Judge.question_demos`), answered with the environment's label.
- pool: scores written instructions instead of proposing them (a 1.5B proposer rarely writes
  a better one): the student's current instructions, then each judging strategy of
  `instruction_pool.JUDGE_POOL`, each set on every predictor and scored with `dspy.Evaluate` on
  the same `n_val = clamp(budget // candidates, 2, available)` train examples (`split_train`'s
  validation split); the best mean score wins, the earliest on a tie, so the hand-written prompt
  stays unless a strategy beats it. calls = candidates x n_val <= budget; nothing on top (no
  proposer, no demos). Judge only: the strategies are judging strategies.

Defaults (`DEFAULTS`) are sized for the embedded local model on 2 cores (see `estimate_seconds`
for the per-call costs assumed): each target's default compile, dev evaluation before and after
included, is estimated at under 45 minutes, and so is `--target all` with its own smaller
defaults.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import dspy

from rbdspy.judge.last_steps import LAST_ACTIONS, action_indices
from rbdspy.optimizers.instruction_pool import JUDGE_POOL, fitted

log = logging.getLogger(__name__)

OPTIMIZERS = ("gepa", "miprov2", "bootstrap", "labeled", "pool")
TARGETS = ("judge", "extractors")

# Seconds per call assumed for the embedded local model on 2 cores, used only for the up-front
# estimate and the default sizes: a judge call reads a trajectory and writes a short verdict; an
# extraction writes several times its tokens; a proposal/reflection call reads a long prompt and
# writes an instruction. Measured: docs/guides/compile.md#rbdspy-compile (the default sizes).
SECONDS_PER_CALL = {"judge": 28.0, "extractors": 45.0, "proposal": 60.0}
TIME_LIMIT_S = 45 * 60
POOL_CANDIDATES = 1 + len(JUDGE_POOL)  # the current instruction and each written strategy


@dataclass(frozen=True)
class Defaults:
    budget: dict[str, int]
    dev_limit: int
    train_limit: int
    max_demos: int = 1


DEFAULTS: dict[tuple[str, bool], Defaults] = {
    # (target, part of --target all)
    # pool: 7 candidates x 8 validation records (4 of each label); 7 x 4 within --target all.
    ("judge", False): Defaults(
        budget={"gepa": 40, "miprov2": 48, "bootstrap": 16, "labeled": 0, "pool": 56}, dev_limit=16, train_limit=32
    ),
    ("extractors", False): Defaults(
        budget={"gepa": 20, "miprov2": 20, "bootstrap": 8, "labeled": 0}, dev_limit=8, train_limit=16
    ),
    ("judge", True): Defaults(
        budget={"gepa": 18, "miprov2": 24, "bootstrap": 8, "labeled": 0, "pool": 28}, dev_limit=10, train_limit=16
    ),
    ("extractors", True): Defaults(
        budget={"gepa": 12, "miprov2": 12, "bootstrap": 6, "labeled": 0}, dev_limit=6, train_limit=12
    ),
}


def defaults_for(target: str, optimizer: str, in_all: bool = False) -> tuple[int, Defaults]:
    check(target, optimizer)
    d = DEFAULTS[(target, in_all)]
    return d.budget[optimizer], d


def check(target: str, optimizer: str) -> None:
    if target not in TARGETS:
        raise ValueError(f"target must be one of {', '.join(TARGETS)}; got {target!r}")
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {', '.join(OPTIMIZERS)}; got {optimizer!r}")
    if target == "extractors" and optimizer == "labeled":
        raise ValueError(
            "labeled needs gold outputs to show as demos and the extractors have none (no gold lessons): "
            "use gepa, miprov2 or bootstrap"
        )
    if target == "extractors" and optimizer == "pool":
        raise ValueError(
            "pool scores a pool of written judging strategies and there is none for the extractors: "
            "use gepa, miprov2 or bootstrap"
        )


def _clamp(value: int, low: int, high: int) -> int:
    return max(min(value, high), min(low, high))


def split_train(trainset: list, n_val: int) -> tuple[list, list]:
    """The first `n_val` examples (balanced already: `balanced_sample` interleaves the labels)
    become the optimizer's validation split, the rest its training split. With too few
    examples both are the whole set."""
    if len(trainset) <= n_val + 1:
        return trainset, trainset
    return trainset[n_val:], trainset[:n_val]


def plan(optimizer: str, budget: int, n_train: int, *, candidates: int = POOL_CANDIDATES) -> dict[str, int]:
    """The optimizer knobs a budget maps to (logged to MLflow with the run). `candidates` is
    the number of instructions the pool recipe scores (its pool and the current one)."""
    if budget < 0:
        raise ValueError(f"budget must be >= 0 metric calls; got {budget}")
    if optimizer == "gepa":
        if budget < 4:
            raise ValueError(
                f"gepa needs a budget of at least 4 metric calls (a validation pass and a minibatch); got {budget}"
            )
        n_val = _clamp(budget // 4, 2, max(n_train - 1, 1))
        return {"max_metric_calls": budget, "n_val": n_val, "reflection_minibatch_size": 3}
    if optimizer == "miprov2":
        n_boot = _clamp(budget // 8, 1, n_train)
        n_val = _clamp(budget // 5, 2, n_train)
        num_trials = (budget - 2 * n_boot) // n_val - 1
        if num_trials < 1:
            raise ValueError(
                f"miprov2 needs a budget of at least {2 * n_boot + 2 * n_val} metric calls here; got {budget}"
            )
        return {
            "num_candidates": 3,
            "num_trials": num_trials,
            "n_val": n_val,
            "n_boot": n_boot,
            "max_metric_calls": 2 * n_boot + n_val * (num_trials + 1),
        }
    if optimizer == "bootstrap":
        if budget < 1:
            raise ValueError("bootstrap needs a budget of at least 1 metric call")
        return {"max_metric_calls": budget, "n_train": min(budget, n_train)}
    if optimizer == "labeled":
        return {"max_metric_calls": 0}
    if optimizer == "pool":
        if budget < 2 * candidates:
            raise ValueError(
                f"pool needs a budget of at least {2 * candidates} metric calls "
                f"(2 records for each of its {candidates} candidate instructions); got {budget}"
            )
        n_val = _clamp(budget // candidates, 2, n_train)
        return {"candidates": candidates, "n_val": n_val, "max_metric_calls": candidates * n_val}
    raise ValueError(f"optimizer must be one of {', '.join(OPTIMIZERS)}; got {optimizer!r}")


def estimate_seconds(target: str, optimizer: str, budget: int, dev_limit: int) -> float:
    """Rough wall time on the embedded local model: dev evaluation before and after, the
    budget's program calls, and the proposal/reflection calls on top."""
    per_call = SECONDS_PER_CALL[target]
    proposals = {"gepa": budget // 6 + 1, "miprov2": 3, "bootstrap": 0, "labeled": 0, "pool": 0}[optimizer]
    return per_call * (2 * dev_limit + budget) + SECONDS_PER_CALL["proposal"] * proposals


# ---- the recipes ----------------------------------------------------------------------------


def run_gepa(
    student,
    trainset,
    *,
    metric_feedback: Callable,
    budget: int,
    reflection_lm=None,
    seed: int = 0,
    num_threads: int = 1,
    **_: Any,
):
    knobs = plan("gepa", budget, len(trainset))
    train, val = split_train(trainset, knobs["n_val"])
    # Extractors: "all" updates both predictors from one minibatch (a minibatch of successes only
    # has nothing to say about the failure predictor, which GEPA then skips).
    selector = "all" if len(list(student.named_predictors())) > 1 else "round_robin"
    optimizer = dspy.GEPA(
        metric=metric_feedback,
        max_metric_calls=budget,
        reflection_lm=reflection_lm or dspy.settings.lm,
        reflection_minibatch_size=knobs["reflection_minibatch_size"],
        component_selector=selector,
        num_threads=num_threads,
        seed=seed,
        use_merge=False,
    )
    return optimizer.compile(student, trainset=train, valset=val), knobs


def run_miprov2(
    student,
    trainset,
    *,
    metric: Callable,
    budget: int,
    metric_threshold: float | None = None,
    reflection_lm=None,
    seed: int = 0,
    num_threads: int = 1,
    **_: Any,
):
    knobs = plan("miprov2", budget, len(trainset))
    boot, val = trainset[: knobs["n_boot"]], trainset[-knobs["n_val"] :]
    optimizer = dspy.MIPROv2(
        metric=metric,
        prompt_model=reflection_lm or dspy.settings.lm,
        auto=None,
        num_candidates=knobs["num_candidates"],
        max_bootstrapped_demos=0,
        max_labeled_demos=0,
        num_threads=num_threads,
        seed=seed,
        metric_threshold=metric_threshold,
        verbose=False,
    )
    compiled = optimizer.compile(
        student,
        trainset=boot,
        valset=val,
        num_trials=knobs["num_trials"],
        minibatch=False,
        program_aware_proposer=False,
        data_aware_proposer=False,
        fewshot_aware_proposer=False,
    )
    return compiled, knobs


def run_bootstrap(
    student,
    trainset,
    *,
    metric: Callable,
    budget: int,
    metric_threshold: float | None = None,
    max_demos: int = 1,
    labeled_demos: int = 0,
    **_: Any,
):
    knobs = plan("bootstrap", budget, len(trainset))
    optimizer = dspy.BootstrapFewShot(
        metric=metric,
        metric_threshold=metric_threshold,
        max_bootstrapped_demos=max_demos,
        max_labeled_demos=labeled_demos,
        max_rounds=1,
    )
    return optimizer.compile(student, trainset=trainset[: knobs["n_train"]]), {**knobs, "max_demos": max_demos}


def run_labeled(student, trainset, *, budget: int = 0, max_demos: int = 1, seed: int = 0, **_: Any):
    knobs = plan("labeled", budget, len(trainset))
    if getattr(student, "design", None) != "probability":
        # LabeledFewShot samples with the global `random`; a seeded shuffle here keeps it reproducible.
        pool = list(trainset)
        random.Random(seed).shuffle(pool)
        compiled = dspy.LabeledFewShot(k=max_demos).compile(student, trainset=pool, sample=False)
        return compiled, {**knobs, "max_demos": max_demos}
    # The probability judge: each predictor is shown the question it asks of short examples.
    chosen = short_balanced(trainset, max_demos, seed)
    if len(chosen) < max_demos:
        log.warning(
            "labeled: %d of %d demos: too few train trajectories of each label with more than three actions",
            len(chosen),
            max_demos,
        )
    compiled = student.deepcopy()
    for attr, demos in student.question_demos(chosen).items():
        getattr(compiled, attr).demos = demos
    return compiled, {**knobs, "max_demos": max_demos, "demo_ids": [e.trajectory.id for e in chosen]}


def short_balanced(examples: list[dspy.Example], k: int, seed: int = 0) -> list[dspy.Example]:
    """`k` demos for the probability judge, labels alternating: for each label, a seeded sample
    from the shorter half of its examples that every question is asked of (more than
    LAST_ACTIONS actions: the three windows differ and the action list is asked), so each demo
    shows all its questions in a few hundred tokens. Short, because a demo is read before every
    call of its predictor (llama.cpp's prompt cache keeps that cheap for a fixed prefix)."""
    rng = random.Random(seed)
    by_label: dict[str, list[dspy.Example]] = {}
    for label in ("success", "failure"):
        sized = [(len(action_indices(e.trajectory)), e.trajectory.id, e) for e in examples if e.verdict == label]
        sized = sorted(((n, i, e) for n, i, e in sized if n > LAST_ACTIONS), key=lambda t: t[:2])
        shorter = [e for _, _, e in sized[: max(k, (len(sized) + 1) // 2)]]
        by_label[label] = rng.sample(shorter, min(len(shorter), (k + 1) // 2 if label == "success" else k // 2))
    out = []
    for i in range(k):
        for label in ("success", "failure"):
            if i < len(by_label[label]):
                out.append(by_label[label][i])
    return out[:k]


def with_instruction(program: dspy.Module, strategy: str | None) -> dspy.Module:
    """A copy of `program` with `strategy` as the instruction of every predictor (whatever the
    judge design names it: predict, checklist, confident); None keeps the current ones."""
    candidate = program.deepcopy()
    if strategy is not None:
        for _, predictor in candidate.named_predictors():
            instructions = predictor.signature.instructions
            predictor.signature = predictor.signature.with_instructions(fitted(strategy, instructions))
    return candidate


def run_pool(
    student,
    trainset,
    *,
    metric: Callable,
    budget: int,
    num_threads: int = 1,
    pool: dict[str, str] | None = None,
    **_: Any,
):
    pool = JUDGE_POOL if pool is None else pool
    candidates: list[tuple[str, str | None]] = [("current", None), *pool.items()]
    knobs: dict[str, Any] = plan("pool", budget, len(trainset), candidates=len(candidates))
    # The examples GEPA would hold out (the first ones, labels interleaved, as split_train takes
    # them); nothing is trained, so the rest goes unused.
    val = trainset[: knobs["n_val"]]
    evaluator = dspy.Evaluate(
        devset=val, metric=metric, num_threads=num_threads, display_progress=False, provide_traceback=False
    )
    programs, scores = [], []
    for name, strategy in candidates:
        program = with_instruction(student, strategy)
        results = evaluator(program).results
        scores.append(sum(float(score) for _, _, score in results) / len(val))
        programs.append(program)
        log.info("pool: %s scored %.3f on %d train examples", name, scores[-1], len(val))
    # max() keeps the first of equal scores: on a tie the current (hand-written) prompt stays.
    best = max(range(len(candidates)), key=lambda i: scores[i])
    knobs["chosen"] = candidates[best][0]
    knobs["val_scores"] = ",".join(f"{name}={score:.3f}" for (name, _), score in zip(candidates, scores, strict=True))
    return programs[best], knobs


RECIPES: dict[str, Callable] = {
    "gepa": run_gepa,
    "miprov2": run_miprov2,
    "bootstrap": run_bootstrap,
    "labeled": run_labeled,
    "pool": run_pool,
}
