"""ReasoningBank: the whole memory loop as one DSPy program.

retrieve -> act (the wrapped agent, memory block injected) -> judge -> extract -> consolidate -> store
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import dspy

from rbdspy.judge.base import BaseJudge
from rbdspy.judge.judge import Judge
from rbdspy.lessons.action_record import RECORD_BY_WORLD
from rbdspy.lessons.distiller import ContrastiveDistiller
from rbdspy.lessons.extractor import Extractor
from rbdspy.loop import compiled_prompts
from rbdspy.loop.agent_io import accepts_input, output_fields, task_text, trajectory_of
from rbdspy.loop.learner import Learner
from rbdspy.loop.lm_errors import act
from rbdspy.loop.plan import Blocking, Call, Plan, arun, run
from rbdspy.loop.retriever import AUTO, MemoryRetriever, Ranking
from rbdspy.memory import MemoryStore, format_memory_block
from rbdspy.memory.consolidation import ConsolidationPolicy
from rbdspy.memory.defence import Quarantine
from rbdspy.render import DEFAULT_BUDGET_TOKENS, DISTILLER_BUDGET_TOKENS, as_renderer
from rbdspy.types import Experience, MemoryItem

RESULT_FIELDS = ("verdict", "memories_used", "memories_added", "trajectory", "retrieval")
EXPERIENCE_FIELD = "experience"  # the agent input that receives served items' typed experiences


def experiences_of(items: Iterable[Any]) -> list[Experience]:
    """The typed experiences among served items (memory items, or a control's item dicts)."""
    found = (item.get("experience") if isinstance(item, dict) else getattr(item, "experience", None) for item in items)
    return [Experience.model_validate(e) if isinstance(e, dict) else e for e in found if e is not None]


QUERY_KINDS = ("situation", "task")
QueryKind = Literal["situation", "task"]
# The retrieval defaults (see README, "Memory that helps"): chosen by measurement.
DEFAULT_RANKING: Ranking = "utility"
DEFAULT_MIN_SIMILARITY: float | None | Literal["auto"] = "auto"


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

    Args:
        agent: any dspy.Module (or Predict) with an input named `memory_field`. If it returns a
            `trajectory` (an rbdspy Trajectory, a message list or dspy.ReAct's dict) that is
            what gets judged; otherwise its inputs and outputs are.
        store: a `MemoryStore`. Shared, never copied: optimizers' deep copies of the bank use
            the same store, and `save()` writes prompts only.
        k: items retrieved per task (0 disables retrieval). "auto" (the default): 1, the paper's
            best, except for a task in a world that persists (the agent's `world` method names
            it; EnvAgent's does where the environment's `world_of` does): 10 there, as a map is
            about the world rather than the task (`MemoryRetriever`).
        scope: items are written with this scope and retrieval only sees this scope.
        consolidation: "append" (the paper's default), "dedup", or a policy object.
        task_field: which input is the task text (default: `task`, or the only input).
        trust_outcome: when the agent's trajectory carries a ground-truth outcome (an
            environment's reward), use it instead of the judge.
        ranking: "similarity" (the paper's) or "utility": similarity joined with each item's
            usefulness learned from the outcomes of the tasks it was served on; with "utility"
            an item that is confidently harmful is retired (kept, no longer served).
        min_similarity: below this cosine similarity (of task texts) nothing is served; "auto"
            (the default) uses the floor measured for the store's embedder (0.7 for the embedded
            MiniLM; none for an embedder rbdspy has not measured, and none for a task in a world
            that persists); None serves at any similarity.
        query: "situation" retrieves by what the agent declares of the task in context (its
            `situation(**task_inputs)` method: EnvAgent's is the task plus the first
            observation), "task" by the task text alone (the paper's). An agent with no
            `situation` method is always queried by task text.
        compiled: compiled prompts for the judge and the extractors. By default the ones the
            package ships (`rbdspy/compiled/`), where present; a path to the output directory of
            `rbdspy compile` (or a .json saved by `save()`) loads those instead; None or False
            keeps the hand-written prompts. `compiled_from` lists the files loaded.
        quarantine: opt-in write-side defence, a `rbdspy.memory.defence.Quarantine`: lessons
            whose text carries instructions aimed at a model (or whose provenance it does not
            trust) are held back instead of stored. None (the default) stores every lesson.
        judge: the judge (`rbdspy.Judge`, of any design); default `Judge(renderer=renderer)`,
            the probability design.
        renderer: how the judge, the extractor and the distiller are shown a trajectory: a token
            budget (default DEFAULT_BUDGET_TOKENS: `EvidenceRenderer`; the distiller shares
            DISTILLER_BUDGET_TOKENS among its attempts), an EvidenceRenderer, any
            Trajectory -> str, or None (`Trajectory.render`, the rendering by characters).

        action_record: what the extractor stores besides lessons (`Extractor`). "auto" (the
            default): in a world that persists (the trajectory names it), every episode as its
            typed experience (`rbdspy.maps`), from which EnvAgent learns the world's map; elsewhere
            nothing. False: lessons only, everywhere (the paper's). An agent that reads no lessons
            (its `reads_lessons` says so) gets no judge and no lessons: only the record.
    """

    def __init__(
        self,
        agent: dspy.Module,
        store: MemoryStore,
        k: int | Literal["auto"] = AUTO,
        *,
        scope: str | None = None,
        consolidation: str | ConsolidationPolicy = "append",
        memory_field: str = "memory",
        task_field: str | None = None,
        trust_outcome: bool = False,
        compiled: Any = compiled_prompts.DEFAULT,
        ranking: Ranking = DEFAULT_RANKING,
        min_similarity: float | None | Literal["auto"] = DEFAULT_MIN_SIMILARITY,
        query: QueryKind = "situation",
        quarantine: Quarantine | None = None,
        judge: Judge | None = None,
        renderer: Any = DEFAULT_BUDGET_TOKENS,
        action_record: bool | str = RECORD_BY_WORLD,
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
        if query not in QUERY_KINDS:
            raise ValueError(f"query must be one of {', '.join(QUERY_KINDS)}; got {query!r}")
        self.agent = agent
        self._takes_experience = accepts_input(agent, EXPERIENCE_FIELD)
        self.store = store
        self.retriever = MemoryRetriever(store, k=k, scope=scope, ranking=ranking, min_similarity=min_similarity)
        if judge is not None and not isinstance(judge, BaseJudge):
            raise TypeError(
                f"judge must be an rbdspy Judge (e.g. rbdspy.judge.ChecklistJudge()); got {type(judge).__name__}"
            )
        # One renderer for the judge, the extractor and the distiller: each reads the trajectory
        # as the others do. A judge given with its own renderer keeps it.
        default = renderer == DEFAULT_BUDGET_TOKENS
        renderer = as_renderer(renderer)
        self.judge = judge if judge is not None else Judge(renderer=renderer)
        self.extractor = Extractor(renderer=renderer, action_record=action_record)
        # The distiller reads k attempts at once: by default it shares a larger budget among them.
        self.distiller = ContrastiveDistiller(renderer=DISTILLER_BUDGET_TOKENS if default else renderer)
        # The agent declares its situation (EnvAgent: the task plus the first observation): the
        # bank retrieves by it, and lessons are stored under the situation they were learned in.
        self.query = "situation" if query == "situation" and callable(getattr(agent, "situation", None)) else "task"
        self.learner = Learner(
            self,
            store,
            consolidation=consolidation,
            scope=scope,
            trust_outcome=trust_outcome,
            retire_harmful=ranking == "utility",
            quarantine=quarantine,
        )
        self.scope = scope
        self.memory_field = memory_field
        self.task_field = task_field
        self.compiled_from: list[str] = []
        self._load_compiled(compiled)

    def _load_compiled(self, compiled: Any) -> None:
        path, required = compiled_prompts.resolve(compiled)
        if path is None:
            return
        if path.suffix == ".json" and not path.is_dir():
            if not path.is_file():
                raise FileNotFoundError(f"no compiled program at {path}")
            self.load(path)
        else:
            self.compiled_from = compiled_prompts.load_directory(self, path, required)

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

    def agent_inputs(self, task_inputs: dict[str, Any], used: list[MemoryItem]) -> dict[str, Any]:
        """The agent's inputs: the task's, plus the served items as a fenced memory block, and, to
        an agent that takes an `experience` input (EnvAgent), the served items' typed experiences."""
        inputs = {**task_inputs, self.memory_field: format_memory_block(used)}
        if self._takes_experience:
            inputs[EXPERIENCE_FIELD] = experiences_of(used)
        return inputs

    def recall_plan(self, task_inputs: dict[str, Any]) -> Plan:
        """Plan -> `Recall`: the task, its situation (when the agent declares one), its world
        (when the agent names one) and the items served for them."""
        task = self.task_of(task_inputs)
        situation = None
        if self.query == "situation":  # an environment reset: blocking work
            situation = yield Blocking(lambda: self.agent.situation(**task_inputs))
        world = self.world_of(task_inputs)
        found = yield Call(self.retriever, {"task": task, "situation": situation, "world": world})
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

    def _plan(self, task_inputs: dict[str, Any]) -> Plan:
        recall = yield from self.recall_plan(task_inputs)
        outputs = output_fields((yield from act(self.agent, self.agent_inputs(task_inputs, recall.memories))))
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
        `rbdspy.envs.dataset.LabelledTrajectory`. The labels are trusted (no judge call); lessons
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
        does not count as a use."""
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
            self.compiled_from = compiled_prompts.load_directory(self, Path(path), required=True)
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
