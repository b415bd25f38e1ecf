"""ReasoningBank: the whole memory loop as one DSPy program.

retrieve -> act (the wrapped agent, memory block injected) -> judge -> extract -> consolidate -> store
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dspy

from rbdspy.core.lm_errors import call_agent
from rbdspy.core.plan import Blocking, Call, Plan, arun, run
from rbdspy.judge.base import BaseJudge
from rbdspy.judge.judge import Judge
from rbdspy.lessons.distiller import ContrastiveDistiller
from rbdspy.lessons.extractor import Extractor
from rbdspy.loop import compiled_prompts
from rbdspy.loop.agent_io import accepts_input, output_fields, task_text, trajectory_of
from rbdspy.loop.learner import Learner
from rbdspy.loop.retriever import MemoryRetriever
from rbdspy.memory import MemoryStore, format_memory_block
from rbdspy.memory.consolidation import ConsolidationPolicy
from rbdspy.memory.defence import Quarantine
from rbdspy.types import Experience, MemoryItem

RESULT_FIELDS = ("verdict", "memories_used", "memories_added", "trajectory", "retrieval")
EXPERIENCE_FIELD = "experience"  # the agent input that receives served items' typed experiences
WORLD_MAP_FIELD = "world_map"  # the agent input that receives the map of the task's world


def experiences_of(items: Iterable[Any]) -> list[Experience]:
    """The typed experiences among served items (memory items, or a control's item dicts)."""
    found = (item.get("experience") if isinstance(item, dict) else getattr(item, "experience", None) for item in items)
    return [Experience.model_validate(e) if isinstance(e, dict) else e for e in found if e is not None]


def trajectory_and_outcome(example: Any, n: int) -> tuple[Any, bool]:
    """(trajectory, outcome) of one seeding example; ValueError naming example `n` otherwise."""
    if isinstance(example, tuple) and len(example) == 2 and isinstance(example[1], bool):
        return example
    split = getattr(example, "split", "train")
    if split != "train":
        raise ValueError(f"example {n} is from the {split!r} split: seed a bank from train records only")
    label = getattr(example, "label", None)
    if getattr(example, "trajectory", None) is None or label not in ("success", "failure"):
        raise ValueError(
            f"example {n} is neither a (trajectory, outcome) pair nor a record with .trajectory and "
            f".label 'success'/'failure'; got {type(example).__name__}"
        )
    return example.trajectory, label == "success"


# What each part of a bank must be, as a TypeError says it: (class, what to pass).
PART_KINDS: dict[str, tuple[type, str]] = {
    "judge": (BaseJudge, "an rbdspy judge (e.g. rbdspy.Judge() or rbdspy.RationaleJudge())"),
    "extractor": (dspy.Module, "a dspy.Module that distils lessons (e.g. rbdspy.Extractor())"),
    "distiller": (dspy.Module, "a dspy.Module that contrasts attempts (e.g. rbdspy.ContrastiveDistiller())"),
    "retriever": (MemoryRetriever, "an rbdspy.MemoryRetriever on the bank's store"),
}


def _part(name: str, given: Any, default: Any) -> Any:
    """The bank's part `name`: `given` as it is, or `default()` when None; a TypeError naming the
    part when `given` is not what the part must be (`PART_KINDS`)."""
    if given is None:
        return default()
    kind, expected = PART_KINDS[name]
    if not isinstance(given, kind):
        raise TypeError(f"{name} must be {expected}; got {type(given).__name__}")
    return given


@dataclass(frozen=True)
class Recall:
    """What the bank retrieved for one task: the task text, its situation, the items it serves
    and, per item, why (`MemoryRetriever`'s `retrieval` records)."""

    task: str
    memories: list[MemoryItem]
    retrieval: list[dict[str, Any]]
    situation: str | None = None  # the agent's situation, when the bank retrieves by it
    world: str | None = None  # the world that persists the task is played in, when the agent names one


class ReasoningBank(dspy.Module):
    """Wraps any agent `dspy.Module` with a memory that learns from the agent's successes and
    failures.

    `bank(**task_inputs)` retrieves the top-k items for the task, passes them to the agent as a
    fenced data block through the input the agent declares (`memory_field`, default
    "memory"), runs the agent, judges the trajectory, extracts lessons and stores them. It
    returns the agent's outputs plus `verdict`, `memories_used`, `memories_added` and
    `trajectory`. All learning goes through `bank.learner` (a `Learner`), which MaTTS and
    the benchmark baselines share.

    The bank is built from its parts, as `dspy.ReAct` is from its tools: the judge, the extractor,
    the distiller and the retriever are each passed in, or built with their defaults when None,
    and a part given is used as it is. What a part does is set on the part (`k` on the retriever,
    `action_record` on the extractor, `renderer` on each part that renders a trajectory); the
    bank's own options are only the loop's. The named configurations (the paper's, rbdspy's
    defaults, a world that persists) are the presets of `rbdspy.loop.presets` (`paper_bank`, ...).

        ReasoningBank(agent, store)                                          # rbdspy's defaults
        ReasoningBank(agent, store, retriever=MemoryRetriever(store, k=3))  # one part changed
        rbdspy.paper_bank(agent, store)                                      # the paper's configuration

    Args:
        agent: any dspy.Module (or Predict) with an input named `memory_field`. If it returns a
            `trajectory` (an rbdspy Trajectory, a message list or dspy.ReAct's dict) that is
            what gets judged; otherwise its inputs and outputs are.
        store: a `MemoryStore`. Shared, never copied: optimizers' deep copies of the bank use
            the same store, and `save()` writes prompts only.
        judge: labels a trajectory (`rbdspy.Judge`, of any design); default `Judge()`, the
            probability design, on DEFAULT_BUDGET_TOKENS (`EvidenceRenderer`).
        extractor: distils lessons from one judged trajectory; default `Extractor()`: lessons
            from successes and failures and, in a world that persists (the trajectory names
            it), every episode also stored as its typed experience (`action_record="auto"`),
            from which EnvAgent learns the world's map. An agent that reads no lessons (its
            `reads_lessons` says so) gets no judge and no lessons: only the extractor's record.
        distiller: distils lessons from several attempts at one task (parallel MaTTS); default
            `ContrastiveDistiller()`, sharing DISTILLER_BUDGET_TOKENS among its attempts.
        retriever: which items are served, how many and by what query; default
            `MemoryRetriever(store)`: k="auto" (1, the paper's best, except for a task in a world
            that persists, where 10), utility ranking, the embedder's measured similarity floor,
            and the agent's situation as the query. It must read this bank's `store`.
        scope: the slice of the store this bank reads and writes: items are written with this
            scope and retrieval only sees this scope (None: every item, written unscoped).
        consolidation: "append" (the paper's default), "dedup", or a policy object.
        memory_field: the agent input that receives the memory block.
        task_field: which input is the task text (default: `task`, or the only input).
        trust_outcome: when the agent's trajectory carries a ground-truth outcome (an
            environment's reward), use it instead of the judge.
        quarantine: opt-in write-side defence, a `rbdspy.memory.defence.Quarantine`: lessons
            whose text carries instructions aimed at a model (or whose provenance it does not
            trust) are held back instead of stored. None (the default) stores every lesson.
        compiled: compiled prompts for the judge and the extractor: the output directory of
            `rbdspy compile` (its judge.json and extractors.json) or a .json written by `save()`,
            loaded into them (given or built) while the bank is built. None (the default) keeps
            their prompts as they are: rbdspy ships no compiled prompts. `compiled_from` lists the
            files loaded.
        serve_map: hand an agent that takes a `world_map` input the map of the task's world (True,
            the default); False serves memory only as the memory block (the paper's configuration).
    """

    def __init__(
        self,
        agent: dspy.Module,
        store: MemoryStore,
        *,
        judge: BaseJudge | None = None,
        extractor: dspy.Module | None = None,
        distiller: dspy.Module | None = None,
        retriever: MemoryRetriever | None = None,
        scope: str | None = None,
        consolidation: str | ConsolidationPolicy = "append",
        memory_field: str = "memory",
        task_field: str | None = None,
        trust_outcome: bool = False,
        quarantine: Quarantine | None = None,
        compiled: str | Path | None = None,
        serve_map: bool = True,
    ):
        super().__init__()
        if not isinstance(agent, dspy.Module):
            raise TypeError(
                "agent must be a dspy.Module (e.g. dspy.ChainOfThought('task, memory -> answer')); "
                f"got {type(agent).__name__}"
            )
        if not accepts_input(agent, memory_field):
            raise ValueError(
                f"agent {type(agent).__name__} has no input named {memory_field!r} to receive the memory block: "
                f"add a `{memory_field}` input field to its signature (or a `{memory_field}` argument to its forward), "
                "or pass memory_field='<the input it has>'"
            )
        self.agent = agent
        self._takes_experience = accepts_input(agent, EXPERIENCE_FIELD)
        self._takes_map = serve_map and accepts_input(agent, WORLD_MAP_FIELD)
        self.store = store
        self.judge = _part("judge", judge, lambda: Judge())
        self.extractor = _part("extractor", extractor, lambda: Extractor())
        self.distiller = _part("distiller", distiller, lambda: ContrastiveDistiller())
        self.retriever = _part("retriever", retriever, lambda: MemoryRetriever(store))
        if self.retriever.store is not store:
            raise ValueError(
                "retriever reads another store than the bank's: build it on the same one "
                "(retriever=MemoryRetriever(store, ...))"
            )
        # The agent declares its situation (EnvAgent: the task plus the first observation): the
        # bank retrieves by it, and lessons are stored under the situation they were learned in.
        by_situation = self.retriever.query == "situation" and callable(getattr(agent, "situation", None))
        self.query = "situation" if by_situation else "task"
        self.learner = Learner(
            self,
            store,
            consolidation=consolidation,
            scope=scope,
            trust_outcome=trust_outcome,
            retire_harmful=self.retriever.ranking == "utility",
            quarantine=quarantine,
        )
        self.scope = scope
        self.memory_field = memory_field
        self.task_field = task_field
        self.compiled_from: list[str] = []
        self._load_compiled(compiled)

    def _load_compiled(self, compiled: Any) -> None:
        path = compiled_prompts.resolve(compiled)
        if path is None:
            return
        if path.suffix == ".json" and not path.is_dir():
            if not path.is_file():
                raise FileNotFoundError(f"no compiled program at {path}")
            self.load(path)
        else:
            self.compiled_from = compiled_prompts.load_directory(self, path)

    @property
    def trust_outcome(self) -> bool:
        """Whether a trajectory's own ground-truth outcome labels it instead of the judge."""
        return self.learner.trust_outcome

    # ---- the loop -------------------------------------------------------------------------

    def task_of(self, task_inputs: dict[str, Any]) -> str:
        """The task text of a call's inputs (what retrieval and the judge see)."""
        if self.memory_field in task_inputs:
            raise ValueError(f"{self.memory_field!r} is filled by the bank from memory; do not pass it as an input")
        return task_text(task_inputs, self.task_field)

    def agent_inputs(
        self, task_inputs: dict[str, Any], used: list[MemoryItem], world: str | None = None
    ) -> dict[str, Any]:
        """The agent's inputs: the task's, plus the served items as a fenced memory block; to an
        agent that takes an `experience` input (EnvAgent), the served items' typed experiences; to
        one that takes a `world_map` input, the map of the task's `world` learned from every
        episode of it the store holds (`learner.maps`)."""
        inputs = {**task_inputs, self.memory_field: format_memory_block(used)}
        if self._takes_experience:
            inputs[EXPERIENCE_FIELD] = experiences_of(used)
        if self._takes_map and world is not None:
            inputs[WORLD_MAP_FIELD] = self.learner.maps.map_for(world)
        return inputs

    def recall_plan(self, task_inputs: dict[str, Any]) -> Plan:
        """Plan -> `Recall`: the task, its situation (when the agent declares one), its world
        (when the agent names one) and the items served for them."""
        task = self.task_of(task_inputs)
        situation = None
        if self.query == "situation":  # an environment reset: blocking work
            situation = yield Blocking(lambda: self.agent.situation(**task_inputs))
        world = self.world_of(task_inputs)
        found = yield Call(self.retriever, {"task": task, "scope": self.scope, "situation": situation, "world": world})
        return Recall(task=task, memories=found.memories, retrieval=found.retrieval, situation=situation, world=world)

    def reads_lessons(self, task_inputs: dict[str, Any]) -> bool:
        """Whether the agent reads the lessons it is served, as it says (its `reads_lessons`
        method, EnvAgent's: not where memory reaches it only as suggested steps); an agent that
        says nothing does. Where it does not, the bank asks no judge and writes no lessons."""
        method = getattr(self.agent, "reads_lessons", None)
        return bool(method(**task_inputs)) if callable(method) else True

    def world_of(self, task_inputs: dict[str, Any]) -> str | None:
        """The world that persists the task is played in, as the agent names it (its `world`
        method, EnvAgent's), else None."""
        method = getattr(self.agent, "world", None)
        return method(**task_inputs) if callable(method) else None

    def acting(self, recall: Recall) -> dspy.Module:
        """The module that plays the task: the agent itself. A bank of another design serves it
        more than inputs (`DemoMemory`: demonstrations on its predictors, for this call)."""
        return self.agent

    def _plan(self, task_inputs: dict[str, Any]) -> Plan:
        recall = yield from self.recall_plan(task_inputs)
        inputs = yield Blocking(self.agent_inputs, (task_inputs, recall.memories, recall.world))
        outputs = output_fields((yield from call_agent(self.acting(recall), inputs)))
        trajectory = trajectory_of(outputs, recall.task, task_inputs)
        learned = yield from self.learner.learn_plan(
            trajectory, recall.task, situation=recall.situation, lessons=self.reads_lessons(task_inputs)
        )
        yield from self.learner.record_use_plan(recall.memories, learned.verdict, recall.task)
        answer = {k: v for k, v in outputs.items() if k not in RESULT_FIELDS}
        return dspy.Prediction(
            **answer,
            verdict=learned.verdict,
            memories_used=recall.memories,
            memories_added=learned.memories_added,
            trajectory=trajectory,
            retrieval=recall.retrieval,
        )

    def forward(self, **task_inputs: Any) -> dspy.Prediction:
        return run(self._plan(task_inputs))

    async def aforward(self, **task_inputs: Any) -> dspy.Prediction:
        return await arun(self._plan(task_inputs))

    # ---- learning from a trajectory the caller already has ----------------------------------

    def ingest(self, trajectory: Any, task: str | None = None, outcome: bool | None = None) -> dspy.Prediction:
        """Judge (unless `outcome` is known), extract and store lessons from one trajectory.

        Returns `Prediction(verdict, memories_added, trajectory)`. An indeterminate verdict
        writes nothing."""
        return self.learner.learn(trajectory, task, outcome, situation=self._situation_of(trajectory, task))

    async def aingest(self, trajectory: Any, task: str | None = None, outcome: bool | None = None) -> dspy.Prediction:
        return await self.learner.alearn(trajectory, task, outcome, situation=self._situation_of(trajectory, task))

    def learn_from(self, examples: Iterable[Any]) -> list[MemoryItem]:
        """Seeds the bank from labelled experience before any task is played: demonstrations,
        logs, or `datasets/*-train.jsonl` records. Each example is a `(trajectory, outcome)` pair
        or a record with `.trajectory` and `.label` ("success"/"failure"), like
        `rbdspy.datasets.dataset.LabelledTrajectory`. The labels are trusted (no judge call); lessons
        are distilled by the bank's extractor. Records that carry a split must be from "train":
        a bank measured on dev tasks must never have learned from them.

        Returns the items written."""
        added: list[MemoryItem] = []
        for n, example in enumerate(examples):
            trajectory, outcome = trajectory_and_outcome(example, n)
            added += self.ingest(trajectory, outcome=outcome).memories_added
        return added

    def _situation_of(self, trajectory: Any, task: str | None) -> str | None:
        """A given trajectory's situation (its task and first observation), for a bank that
        retrieves by situation."""
        return self.learner.coerce(trajectory, task).situation() if self.query == "situation" else None

    # ---- retrieval and persistence -----------------------------------------------------------

    def retrieve(
        self,
        task: str,
        k: int | None = None,
        scope: str | None = None,
        situation: str | None = None,
        world: str | None = None,
    ) -> list[MemoryItem]:
        """The items the bank would serve for `task` (in `situation` and `world`, when given);
        does not count as a use. `scope` defaults to the bank's."""
        scope = scope if scope is not None else self.scope
        return self.retriever(task=task, k=k, scope=scope, situation=situation, world=world).memories

    def save(self, path, save_program: bool = False, modules_to_serialize=None):
        """Saves every predictor's prompts and demos as JSON. The store persists itself and is
        never serialised here."""
        if save_program or Path(path).suffix != ".json":
            raise ValueError(f"ReasoningBank saves its prompts as JSON only: use a path ending in .json (got {path!r})")
        return super().save(path)

    def load(self, path, allow_pickle: bool = False, allow_unsafe_lm_state: bool = False):
        """Loads prompts saved by `save()`, or a directory written by `rbdspy compile`
        (judge.json / extractors.json). JSON only: a saved program is never unpickled."""
        if not allow_pickle and Path(path).is_dir():
            self.compiled_from = compiled_prompts.load_directory(self, Path(path))
            return self
        if allow_pickle or Path(path).suffix != ".json":
            raise ValueError(f"ReasoningBank loads JSON only, never pickle: use a .json file (got {path!r})")
        # Read here, not by dspy.Module.load: prompts are checked and never carry LM settings or
        # keys unless the caller asks (allow_unsafe_lm_state=True, for a file it trusts).
        try:
            compiled_prompts.load_state_file(self, Path(path), allow_lm_settings=allow_unsafe_lm_state)
        except (KeyError, TypeError, json.JSONDecodeError) as error:
            raise ValueError(f"{path} is not a saved ReasoningBank ({type(error).__name__}: {error})") from error
        self.compiled_from = [str(path)]
        return self
