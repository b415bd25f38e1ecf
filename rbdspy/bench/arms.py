"""The arms of the benchmark: name -> how to build the program that plays the stream.

Every arm wraps the same `EnvAgent` (same LM, same step budget) and gets a fresh, empty store,
so the only thing that differs between arms is the memory design. The program is called as
`program(task=<description>, task_id=<id>)` and returns a Prediction with `trajectory`
(whose `outcome` is the environment's verdict), `verdict` (None when nothing judged),
`memories_used` and `memories_added`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import dspy

from rbdspy.agent import EnvAgent
from rbdspy.agent.compiled_agent import shipped_for
from rbdspy.agent.policies import lessons_in_prompt
from rbdspy.agent.user_react import UserReAct
from rbdspy.bench.baselines import (
    NoMemory,
    SuccessOnlyBank,
    SuccessOnlyExtractor,
    TrajectoryMemory,
    WorkflowMemory,
)
from rbdspy.bench.build_scaling import BuildTimeScaling
from rbdspy.bench.controls import FixedMemory, gold_exemplar, oracle_facts, own_walkthrough, placebo
from rbdspy.loop.demo_memory import DemoMemory
from rbdspy.loop.presets import ACTIONS, DEFAULTS, PAPER, WORLD, Preset
from rbdspy.loop.reasoning_bank import ReasoningBank
from rbdspy.memory import MemoryStore
from rbdspy.scaling.matts import MaTTS

BASELINE = "no-memory"

# The bare agent again, to be played in another session or on another machine (--resume adds it):
# how often it agrees with no-memory is the noise floor of every paired difference.
REPLAY = "no-memory-replay"


@dataclass(frozen=True)
class BuildContext:
    """What an arm's program is built from. `compiled` is passed to the bank as is: a compile's
    output directory or a bank's .json, or None for the hand-written prompts. `stream` is the
    run's task stream (the controls read its build tasks)."""

    agent: dspy.Module
    store: MemoryStore
    compiled: str | None = None
    stream: tuple = ()


@dataclass(frozen=True)
class Arm:
    name: str
    description: str
    build: Callable[[BuildContext], dspy.Module]
    uses_memory: bool = True
    seeded: bool = False  # the bank learns from train records (`learn_from`) before the first task


# An arm is a preset (`rbdspy.loop.presets`: the paper's configuration, kept as its own baseline
# whatever rbdspy's defaults become; rbdspy's defaults; ...) or a baseline's parts, around the
# stream's agent. Every part is built by the arm, with its settings; nothing is changed on it after.


def _preset(preset: Preset, k: int | None = None, **options: Any) -> Callable[[BuildContext], dspy.Module]:
    """`preset`'s bank around the stream's agent; `k`: its retriever serving that many items."""

    def build(ctx: BuildContext) -> dspy.Module:
        retriever = preset.retriever(ctx.store, k=k) if k is not None else None
        return preset.bank(ctx.agent, ctx.store, retriever=retriever, compiled=ctx.compiled, **options)

    return build


def _baseline(
    cls: type[ReasoningBank], extractor: Callable[[], dspy.Module] | None = None, **options: Any
) -> Callable[[BuildContext], dspy.Module]:
    """A memory design of its own (`baselines.py`, `DemoMemory`) with the paper's retrieval: `cls`
    around the stream's agent with its own extractor (`extractor()`, else `cls`'s default one)."""
    return lambda ctx: cls(
        ctx.agent,
        ctx.store,
        retriever=PAPER.retriever(ctx.store),
        extractor=extractor() if extractor is not None else None,
        compiled=ctx.compiled,
        **options,
    )


def _read_by_agent(build: Callable[[BuildContext], dspy.Module]) -> Callable[[BuildContext], dspy.Module]:
    """`build` around the stream's agent with the memory block in its prompt and no steps offered:
    lessons reach the agent as the paper serves them, read."""

    def make(ctx: BuildContext) -> dspy.Module:
        agent = ctx.agent
        if isinstance(agent, EnvAgent):
            agent = agent.with_policies(lessons_in_prompt(agent.policies))
        return build(BuildContext(agent=agent, store=ctx.store, compiled=ctx.compiled, stream=ctx.stream))

    return make


def _compiled_agent(agent: dspy.Module) -> dspy.Module:
    """The stream's user agent with the compiled program rbdspy ships for its environment."""
    if not isinstance(agent, UserReAct):
        raise ValueError("the compiled-agent arm plays a user agent: run the bench with --agent react (or a variant)")
    return agent.with_compiled(shipped_for(agent.env.name))


def _build_ids(ctx: BuildContext) -> list[str]:
    return [t.task_id for t in ctx.stream if t.phase == "build"]


CONTROLS: dict[str, Callable[[BuildContext], Any]] = {
    "oracle-facts": lambda ctx: oracle_facts(ctx.agent.env),
    "gold-exemplar": lambda ctx: gold_exemplar(ctx.agent.env, _build_ids(ctx)),
    "placebo": lambda ctx: placebo(ctx.agent.env),
    "own-walkthrough": lambda ctx: own_walkthrough(ctx.agent.env),
}


def _control(name: str) -> Callable[[BuildContext], dspy.Module]:
    return lambda ctx: FixedMemory(ctx.agent, CONTROLS[name](ctx), name)


def _matts(mode: str, k: int = 3) -> Callable[[BuildContext], dspy.Module]:
    return lambda ctx: MaTTS(_preset(PAPER)(ctx), k=k, mode=mode)


def _build_scaling(
    k: int, mode: Literal["parallel", "sequential"] = "parallel"
) -> Callable[[BuildContext], dspy.Module]:
    """rbdspy's default bank, with MaTTS (k rollouts, or 1 and k-1 refinements) on the build tasks only."""
    return lambda ctx: BuildTimeScaling(_preset(DEFAULTS)(ctx), _build_ids(ctx), k=k, mode=mode)


def _demo_scaling(k: int, build_only: bool = True, **options: Any) -> Callable[[BuildContext], dspy.Module]:
    """The own-agent default (`demo-memory`, with `options`) with MaTTS (k parallel rollouts, the
    first as the bank alone plays it, each won one kept as demos) on the build tasks only, or on
    every task (`build_only=False`: the test-time view)."""

    def build(ctx: BuildContext) -> dspy.Module:
        bank = _baseline(DemoMemory, **options)(ctx)
        return BuildTimeScaling(bank, _build_ids(ctx), k=k) if build_only else MaTTS(bank, k=k, plain_first=True)

    return build


ARMS: dict[str, Arm] = {
    arm.name: arm
    for arm in (
        Arm(
            BASELINE,
            "the agent alone: empty memory block, no judge, nothing written",
            lambda ctx: NoMemory(ctx.agent),
            uses_memory=False,
        ),
        Arm(
            REPLAY,
            "the bare agent again, played in another session or machine: its agreement with no-memory is the "
            "noise floor",
            lambda ctx: NoMemory(ctx.agent),
            uses_memory=False,
        ),
        Arm(
            "reasoningbank",
            "the paper's ReasoningBank: k=1 by task-text similarity, LM-judge labels, lessons from successes "
            "and failures",
            _preset(PAPER),
        ),
        Arm(
            "reasoningbank-read",
            "the paper's ReasoningBank as the paper serves it: its lessons in the prompt of an agent that reads "
            "them (the memory block shown, no steps offered), whatever policies the stream's agent plays with",
            _read_by_agent(_preset(PAPER)),
        ),
        Arm(
            "reasoningbank-improved",
            "rbdspy's defaults: retrieval by situation with a similarity floor, utility ranking that retires "
            "harmful items, LM-judge labels; in a world that persists, every episode's actions and places "
            "stored too and k=10 with no floor (as reasoningbank-routes)",
            _preset(DEFAULTS),
        ),
        Arm(
            "reasoningbank-actions",
            "rbdspy's defaults with k=3 and no similarity floor, and each judged success also stored as the "
            "actions that won it (routes for EnvAgent(suggest=True))",
            _preset(ACTIONS),
        ),
        Arm(
            "reasoningbank-actions-oracle",
            "reasoningbank-actions with the environment's labels instead of the judge (trust_outcome)",
            _preset(ACTIONS, trust_outcome=True),
        ),
        Arm(
            "reasoningbank-routes",
            "reasoningbank-actions with every judged episode stored as the actions it took and the places it "
            "saw, won or not (routes that do not depend on the judge's labels), k=10",
            _preset(WORLD),
        ),
        Arm(
            "reasoningbank-seeded",
            "rbdspy's defaults, the bank seeded from labelled train trajectories before the stream starts",
            _preset(DEFAULTS),
            seeded=True,
        ),
        Arm(
            "reasoningbank-oracle",
            "ReasoningBank with the environment's labels instead of the judge (trust_outcome)",
            _preset(PAPER, trust_outcome=True),
        ),
        Arm(
            "success-only",
            "ReasoningBank, judge labels, failures not distilled",
            _baseline(SuccessOnlyBank, lambda: PAPER.extractor(SuccessOnlyExtractor)),
        ),
        Arm(
            "trajectory-memory",
            "Synapse-style: judged-successful raw trajectories retrieved as exemplars (k=1)",
            _baseline(TrajectoryMemory),
        ),
        Arm(
            "workflow-memory", "AWM-style: a workflow induced from each judged success (k=1)", _baseline(WorkflowMemory)
        ),
        Arm(
            "demo-memory",
            "the agent's own judged-successful episodes served back to its predictors as DSPy demos (k=1)",
            _baseline(DemoMemory),
        ),
        Arm(
            "demo-memory-oracle",
            "demo-memory with the environment's labels instead of the judge's (trust_outcome)",
            _baseline(DemoMemory, trust_outcome=True),
        ),
        Arm(
            "compiled-agent",
            "no memory; the stream's user agent (--agent react...) with the compiled program rbdspy ships for "
            "the environment",
            lambda ctx: NoMemory(_compiled_agent(ctx.agent)),
            uses_memory=False,
        ),
        Arm(
            "matts-parallel-k3",
            "MaTTS parallel: 3 rollouts per task, best-of-3 by the selector, contrastive lessons",
            _matts("parallel"),
        ),
        Arm(
            "matts-sequential-k3",
            "MaTTS sequential: 1 rollout + 2 refinement passes, lessons with the notes",
            _matts("sequential"),
        ),
        # The k sweep of the MaTTS scaling figure (k=3 above). With k=1 parallel is one rollout whose
        # lessons come from the contrastive distiller; sequential is one rollout and no refinement.
        Arm(
            "matts-parallel-k1",
            "MaTTS parallel, k=1: one rollout, lessons from the contrastive distiller",
            _matts("parallel", 1),
        ),
        Arm(
            "matts-parallel-k2",
            "MaTTS parallel, k=2: 2 rollouts, best-of-2, contrastive lessons",
            _matts("parallel", 2),
        ),
        Arm("matts-sequential-k1", "MaTTS sequential, k=1: one rollout, no refinement pass", _matts("sequential", 1)),
        Arm("matts-sequential-k2", "MaTTS sequential, k=2: 1 rollout + 1 refinement pass", _matts("sequential", 2)),
        # Memory bought with compute: k rollouts of every build task written to rbdspy's default bank,
        # the measured tasks played once (k=1 is reasoningbank-improved).
        Arm(
            "improved-build-k3",
            "rbdspy's defaults, each build task played by 3 parallel rollouts (MaTTS), every rollout's "
            "episode kept; measured tasks once",
            _build_scaling(3),
        ),
        Arm(
            "improved-build-k5",
            "rbdspy's defaults, each build task played by 5 parallel rollouts (MaTTS), every rollout's "
            "episode kept; measured tasks once",
            _build_scaling(5),
        ),
        # Sequential cannot replay a game: its passes re-read the one episode, and their notes reach
        # memory only as lessons. For an agent that reads none (the map's follower) or a bank that
        # keeps won episodes (demo-memory), it writes what k=1 writes, so no demo arm of it.
        Arm(
            "improved-build-seq-k3",
            "rbdspy's defaults, each build task played once and re-examined twice (MaTTS sequential), "
            "lessons written from the episode with its notes; measured tasks once",
            _build_scaling(3, mode="sequential"),
        ),
        Arm(
            "demo-build-k3",
            "demo-memory, each build task played by 3 parallel rollouts (MaTTS), every won rollout kept as "
            "demos; measured tasks once",
            _demo_scaling(3),
        ),
        Arm(
            "demo-build-k5",
            "demo-memory, each build task played by 5 parallel rollouts (MaTTS), every won rollout kept as "
            "demos; measured tasks once",
            _demo_scaling(5),
        ),
        # The same with the environment's labels: what more rollouts buy once the won ones are known.
        Arm(
            "demo-build-oracle-k3",
            "demo-memory-oracle, each build task played by 3 parallel rollouts (MaTTS), every rollout the "
            "environment scored won kept as demos; measured tasks once",
            _demo_scaling(3, trust_outcome=True),
        ),
        Arm(
            "demo-build-oracle-k5",
            "demo-memory-oracle, each build task played by 5 parallel rollouts (MaTTS), every rollout the "
            "environment scored won kept as demos; measured tasks once",
            _demo_scaling(5, trust_outcome=True),
        ),
        Arm(
            "demo-matts-k3",
            "demo-memory with MaTTS parallel on every task: 3 rollouts, best-of-3 by the selector (judge "
            "labels), every won rollout kept as demos",
            _demo_scaling(3, build_only=False),
        ),
        Arm(
            "reasoningbank-k1",
            "retrieval ablation: ReasoningBank with top-1 (same as reasoningbank)",
            _preset(PAPER, k=1),
        ),
        Arm("reasoningbank-k2", "retrieval ablation: ReasoningBank with top-2", _preset(PAPER, k=2)),
        Arm("reasoningbank-k3", "retrieval ablation: ReasoningBank with top-3", _preset(PAPER, k=3)),
        # Controls (persistent worlds, --env textworld): fixed memories that bound what memory can do.
        Arm(
            "oracle-facts",
            "control: the world's map and where every object and key is, served on every task (fact ceiling)",
            _control("oracle-facts"),
            uses_memory=False,
        ),
        Arm(
            "gold-exemplar",
            "control: the walkthroughs of the 3 most similar build quests (trajectory ceiling)",
            _control("gold-exemplar"),
            uses_memory=False,
        ),
        Arm(
            "own-walkthrough",
            "control: the task's own walkthrough (can the agent follow an action sequence from memory?)",
            _control("own-walkthrough"),
            uses_memory=False,
        ),
        Arm(
            "placebo",
            "control: a block of the same length about another world (the cost of a longer prompt)",
            _control("placebo"),
            uses_memory=False,
        ),
    )
}

# ReasoningBank as the paper serves it and as the agent reads it, then rbdspy's defaults and its
# action and route banks: the bank arms of each set that compares memory designs.
_BANK_DESIGNS = [
    "reasoningbank",
    "reasoningbank-read",
    "reasoningbank-improved",
    "reasoningbank-actions",
    "reasoningbank-actions-oracle",
    "reasoningbank-routes",
]

# Named sets for --arms. "default" fits the embedded local LM in about an hour
# (docs/guides/bench.md#default-size-and-its-duration).
ARM_SETS: dict[str, list[str]] = {
    "default": [BASELINE, "reasoningbank", "reasoningbank-oracle"],
    # Where a lift comes from: the paper's configuration against the bare agent, then rbdspy's
    # defaults, the defaults seeded before the stream, and the paper's with the environment's
    # labels instead of the judge's (what a perfect judge would add).
    "lift": [BASELINE, "reasoningbank", "reasoningbank-improved", "reasoningbank-seeded", "reasoningbank-oracle"],
    "baselines": [BASELINE, "reasoningbank", "success-only", "trajectory-memory", "workflow-memory"],
    "matts": [BASELINE, "reasoningbank", "matts-parallel-k3", "matts-sequential-k3"],
    "matts-scaling": [
        "matts-parallel-k1",
        "matts-parallel-k2",
        "matts-parallel-k3",
        "matts-sequential-k1",
        "matts-sequential-k2",
        "matts-sequential-k3",
    ],
    # A user's own agent (--agent react) on the web: each form of memory it could be served, the
    # judge's labels and the page's reward beside each other for the demonstrations.
    "web": [BASELINE, "reasoningbank", "trajectory-memory", "workflow-memory", "demo-memory", "demo-memory-oracle"],
    # A user's agent compiled on other task types' train tasks (rbdspy compile-agent) against itself.
    "compiled-agent": [BASELINE, "compiled-agent"],
    # Memory bought with compute on the build tasks (issue 67's scaling over k = 1, 3, 5).
    "build-scaling": [
        BASELINE,
        "reasoningbank-improved",
        "improved-build-k3",
        "improved-build-k5",
        "improved-build-seq-k3",
    ],
    # The same for a user's agent (--agent react...), whose default bank keeps its won episodes as demos.
    "demo-scaling": [BASELINE, "demo-memory", "demo-build-k3", "demo-build-k5"],
    "demo-scaling-oracle": [BASELINE, "demo-memory-oracle", "demo-build-oracle-k3", "demo-build-oracle-k5"],
    "topk": [BASELINE, "reasoningbank-k1", "reasoningbank-k2", "reasoningbank-k3"],
    # Persistent worlds (--env textworld): the controls, then the memory arms beside them.
    "controls": [BASELINE, "oracle-facts", "gold-exemplar", "own-walkthrough", "placebo"],
    "house": [
        BASELINE,
        *_BANK_DESIGNS,
        "trajectory-memory",
        "workflow-memory",
        "oracle-facts",
        "gold-exemplar",
        "own-walkthrough",
        "placebo",
    ],
    "all": [
        BASELINE,
        *_BANK_DESIGNS,
        "reasoningbank-seeded",
        "reasoningbank-oracle",
        "success-only",
        "trajectory-memory",
        "workflow-memory",
        "demo-memory",
        "demo-memory-oracle",
        "improved-build-k3",
        "improved-build-k5",
        "improved-build-seq-k3",
        "matts-parallel-k3",
        "matts-sequential-k3",
        "reasoningbank-k2",
        "reasoningbank-k3",
    ],
}


def parse_arms(spec: str | list[str] | None) -> list[str]:
    """A comma list of arm names and/or set names ("default", "all", ...) -> arm names, in
    order, without repeats. Unknown names raise ValueError listing the known ones."""
    if spec is None:
        parts = ["default"]
    elif isinstance(spec, str):
        parts = [p.strip() for p in spec.split(",") if p.strip()]
    else:
        parts = list(spec)
    names: list[str] = []
    for part in parts:
        expanded = ARM_SETS.get(part, [part])
        for name in expanded:
            if name not in ARMS:
                raise ValueError(f"unknown arm {name!r}; arms: {', '.join(ARMS)}; sets: {', '.join(ARM_SETS)}")
            if name not in names:
                names.append(name)
    if not names:
        raise ValueError("no arms given; e.g. --arms no-memory,reasoningbank")
    return names
