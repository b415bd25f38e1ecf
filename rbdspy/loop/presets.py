"""The named configurations of a ReasoningBank, declared once: which retriever and which extractor
record each uses. The docs and the benchmark's arms build their banks from these.

    rbdspy.paper_bank(agent, store)      # the paper's: k=1 by task-text similarity, no records
    rbdspy.default_bank(agent, store)    # rbdspy's defaults: what ReasoningBank(agent, store) is
    rbdspy.actions_bank(agent, store)    # k=3, no floor, each judged success also stored as its actions
    rbdspy.world_bank(agent, store)      # a world that persists: k=10, no floor, every episode recorded
    rbdspy.own_agent_bank(agent, store)  # for your own program: its judged wins served back as demos

Each function takes the bank's other parts and options as ReasoningBank does (`judge=`,
`trust_outcome=`, `compiled=`, ...); a part passed replaces the preset's (`retriever=`, `extractor=`).
A `Preset` also builds its parts alone, for a bank of another class (a benchmark baseline):
`PAPER.retriever(store, k=2)`, `PAPER.extractor(SuccessOnlyExtractor)`.

Every preset labels with the LM judge (`rbdspy.Judge()`, rbdspy's default design) unless given
another judge, and distils lessons from successes and failures.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import dspy

from rbdspy.lessons.auto import IN_A_WORLD
from rbdspy.lessons.episode_record import RECORD_BY_WORLD, ROUTE_MEMORIES, SUCCESSES
from rbdspy.lessons.extractor import Extractor
from rbdspy.loop.demo_memory import DemoMemory
from rbdspy.loop.reasoning_bank import ReasoningBank
from rbdspy.loop.retriever import MemoryRetriever
from rbdspy.memory import MemoryStore


@dataclass(frozen=True)
class Preset:
    """A named configuration: the retriever's settings, what the extractor records, and whether the
    bank hands its agent the map of the task's world.

    `retrieval` holds `MemoryRetriever` keyword arguments (those not given keep the retriever's
    defaults, rbdspy's); `action_record` is the extractor's (`Extractor(action_record=...)`);
    `serves_map` the bank's (`ReasoningBank(serve_map=...)`)."""

    name: str
    description: str
    retrieval: Mapping[str, Any] = field(default_factory=dict)
    action_record: bool | str = RECORD_BY_WORLD
    serves_map: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "retrieval", MappingProxyType(dict(self.retrieval)))

    def retriever(self, store: MemoryStore, **overrides: Any) -> MemoryRetriever:
        """The preset's retriever on `store`; `overrides` replace its settings (e.g. `k=2`)."""
        return MemoryRetriever(store, **{**self.retrieval, **overrides})

    def extractor(self, cls: type[Extractor] = Extractor, **options: Any) -> Extractor:
        """The preset's extractor: a `cls` (an Extractor, or a subclass such as a baseline's) that
        records as the preset says; `options` are its other arguments (e.g. `renderer=`)."""
        return cls(action_record=self.action_record, **options)

    def bank(self, agent: dspy.Module, store: MemoryStore, **parts_and_options: Any) -> ReasoningBank:
        """A ReasoningBank configured so: the preset's retriever and extractor, unless given."""
        if parts_and_options.get("retriever") is None:
            parts_and_options["retriever"] = self.retriever(store)
        if parts_and_options.get("extractor") is None:
            parts_and_options["extractor"] = self.extractor()
        parts_and_options.setdefault("serve_map", self.serves_map)
        return ReasoningBank(agent, store, **parts_and_options)


# The paper's configuration, kept as its own baseline whatever rbdspy's defaults become: the task
# text as the query, similarity alone, no floor, one item, lessons only (no action record in any
# world, no map handed to the agent).
PAPER = Preset(
    "paper",
    "the paper's ReasoningBank: k=1 by task-text similarity, LM-judge labels, lessons from successes and "
    "failures, no records",
    {"k": 1, "query": "task", "ranking": "similarity", "min_similarity": None},
    action_record=False,
    serves_map=False,
)
# rbdspy's defaults: the parts' own (MemoryRetriever(store), Extractor()), chosen by measurement.
DEFAULTS = Preset(
    "default",
    "rbdspy's defaults: retrieval by situation with the embedder's similarity floor, utility ranking that "
    "retires harmful items, LM-judge labels; in a world that persists, every episode's actions and places "
    "stored too and k=10 with no floor (`rbdspy.lessons.auto`)",
)
# Each judged success also stored as the actions that won it (routes for EnvAgent(suggest=True)); 3
# items serve the record beside the lessons stored under the same task.
ACTIONS = Preset(
    "actions",
    "rbdspy's defaults with k=3 and no similarity floor, and each judged success also stored as the actions "
    "that won it",
    {"k": ROUTE_MEMORIES, "min_similarity": None},
    action_record=SUCCESSES,
)
# A world that persists (a house whose rooms and things stay put): what "auto" resolves to in such a
# world (`rbdspy.lessons.auto.IN_A_WORLD`), for every task.
WORLD = Preset(
    "world",
    f"a world that persists: k={IN_A_WORLD.k} with no similarity floor, every episode stored as the actions "
    "it took and the places it saw, won or not",
    {"k": IN_A_WORLD.k, "min_similarity": IN_A_WORLD.min_similarity},
    action_record=IN_A_WORLD.action_record,
)
PRESETS: dict[str, Preset] = {preset.name: preset for preset in (PAPER, DEFAULTS, ACTIONS, WORLD)}


def paper_bank(agent: dspy.Module, store: MemoryStore, **parts_and_options: Any) -> ReasoningBank:
    """The paper's ReasoningBank: one item by task-text similarity (no floor, no utility), the LM
    judge's labels, lessons from successes and failures, no action record (`PAPER`)."""
    return PAPER.bank(agent, store, **parts_and_options)


def default_bank(agent: dspy.Module, store: MemoryStore, **parts_and_options: Any) -> ReasoningBank:
    """rbdspy's defaults, what `ReasoningBank(agent, store)` is (`DEFAULTS`): k="auto", retrieval
    by situation with the embedder's measured floor, utility ranking, records in a world that
    persists."""
    return DEFAULTS.bank(agent, store, **parts_and_options)


def own_agent_bank(agent: dspy.Module, store: MemoryStore, **parts_and_options: Any) -> DemoMemory:
    """rbdspy's default for a program that is not `EnvAgent` (a user's `dspy.ReAct`): its own
    judged-successful episodes served back to its predictors as DSPy demos (`DemoMemory`), the most
    similar one by the paper's retrieval (k=1 by task-text similarity, no floor).

    Chosen by a rule written down before the choice, from the web stream's build tasks only (the
    form with the most wins among those labelled by the judge: `python -m benchmarks.choose_default`);
    what it does on tasks no one chose it on is in docs/results/memory.md."""
    if parts_and_options.get("retriever") is None:
        parts_and_options["retriever"] = PAPER.retriever(store)
    return DemoMemory(agent, store, **parts_and_options)


def actions_bank(agent: dspy.Module, store: MemoryStore, **parts_and_options: Any) -> ReasoningBank:
    """rbdspy's defaults with k=3 and no similarity floor, each judged success also stored as the
    actions that won it (`ACTIONS`)."""
    return ACTIONS.bank(agent, store, **parts_and_options)


def world_bank(agent: dspy.Module, store: MemoryStore, **parts_and_options: Any) -> ReasoningBank:
    """For a world that persists: k=10 with no similarity floor, every episode stored as where it
    went and what it saw, won or not (`WORLD`: what "auto" means in such a world, for every task)."""
    return WORLD.bank(agent, store, **parts_and_options)
