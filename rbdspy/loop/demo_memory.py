"""Memory as demonstrations: the agent's own past successes, served back to its predictors as
few-shot demos (Synapse's exemplar memory, in DSPy's own form).

A small model acts on what it has seen done. The embedded 1.5B does not call a plain `dspy.ReAct`'s
tools from their descriptions alone (it writes the argument schema instead of a value), and acts
once it has seen one correct call. A demo is what a DSPy optimizer writes into `predictor.demos`;
here the bank writes them per task, from the episodes most like it that were won:

- While the agent plays, every call of one of its predictors is recorded as DSPy's optimizers
  record it (`dspy.settings.trace`: the predictor, its inputs, its outputs), named as
  `agent.named_predictors()` names it (`ServedDemos`).
- A won episode is stored as one item whose `demos` are those calls (`DemoWriter`); a failure
  writes nothing.
- Before the next task, the items retrieved for it give each predictor the calls recorded from the
  predictor of the same name, ahead of its own demos, for that call only; its own are back after.

Nothing here knows an environment or a module: any `dspy.Module` whose predictors are named the same
from one task to the next (a ReAct, a ChainOfThought, a user's program) is served its own calls.
The memory block stays empty: the demos are the memory.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import dspy
from pydantic_core import to_jsonable_python

from rbdspy.core.plan import Plan
from rbdspy.lessons.episode_record import RECORD_BY_WORLD, check_mode
from rbdspy.lessons.exemplar import ExemplarWriter
from rbdspy.lessons.extractor import RecordsEpisodes
from rbdspy.loop.agent_io import output_fields, trajectory_of
from rbdspy.loop.reasoning_bank import ReasoningBank, Recall
from rbdspy.loop.retriever import MemoryRetriever
from rbdspy.memory import MemoryStore
from rbdspy.types import Demo, Lesson, MemoryItem, Trajectory, Verdict

DEMOS_KEY = "demos"  # where a trajectory carries its recorded predictor calls (Trajectory.metadata)
DEFAULT_MAX_DEMOS = 8  # per predictor and task: a won web episode is 2-6 ReAct steps
# Per predictor and task, the demos' size as JSON text (about 3,000 tokens): a ReAct step's demo
# carries the episode so far, so the 7 step calls of a won 6-step text-game episode are some 21,600
# characters, more than an 8,192-token context holds beside the task, and a prompt that does not fit
# ends the episode before its first action. A won web episode's are about 2,000. The budget covers
# the served demos only, not the agent's own demos or the episode's trajectory.
DEFAULT_MAX_DEMO_CHARS = 10_000


def _jsonable(value: Any) -> Any:
    """A field value as JSON data (a tool call's args, a typed output), so that every backend
    stores it; what JSON cannot hold becomes its text."""
    return to_jsonable_python(value, fallback=str)


def recorded_calls(agent: dspy.Module, trace: Iterable[tuple[Any, Mapping[str, Any], Any]]) -> list[Demo]:
    """The calls in a DSPy `trace` made by `agent`'s own predictors, as `Demo`s named as the agent
    names them; calls of other modules are left out."""
    names = {id(predictor): name for name, predictor in agent.named_predictors()}
    calls = []
    for predictor, inputs, prediction in trace:
        name = names.get(id(predictor))
        if name is None:
            continue
        outputs = output_fields(prediction)
        calls.append(Demo(predictor=name, inputs=_jsonable(dict(inputs)), outputs=_jsonable(outputs)))
    return calls


def demo_size(demo: Demo) -> int:
    """A demo's size as the JSON text of its inputs and outputs, in characters."""
    return len(json.dumps(demo.inputs, ensure_ascii=False)) + len(json.dumps(demo.outputs, ensure_ascii=False))


def demos_by_predictor(
    items: Iterable[MemoryItem], max_demos: int = DEFAULT_MAX_DEMOS, max_chars: int = DEFAULT_MAX_DEMO_CHARS
) -> dict[str, list[Demo]]:
    """The demos the served `items` carry, grouped by the predictor they were recorded from, in the
    order served (most relevant item first, each episode's calls in order), at most `max_demos` and
    `max_chars` (`demo_size`) each. An episode's calls are taken from its first until one does not
    fit; the next item's may still fit. So a long episode gives its first steps, and what is served
    always fits the budget."""
    grouped: dict[str, list[Demo]] = {}
    sizes: dict[str, int] = {}
    for item in items:
        full: set[str] = set()  # predictors this item's calls no longer fit
        for demo in item.demos or []:
            name, size = demo.predictor, demo_size(demo)
            if name in full or len(grouped.get(name, [])) >= max_demos or sizes.get(name, 0) + size > max_chars:
                full.add(name)
                continue
            grouped.setdefault(name, []).append(demo)
            sizes[name] = sizes.get(name, 0) + size
    return grouped


class ServedDemos(dspy.Module):
    """`agent` for one call: its predictors given `demos` (by name) ahead of their own, and every
    call of them recorded. Returns the agent's outputs with `trajectory` an rbdspy Trajectory whose
    `metadata["demos"]` holds the calls recorded (the agent's demos are restored however it ends).

    A memory field the demos carry is blanked (`memory_field`): what was served then is not part of
    what was done."""

    def __init__(self, agent: dspy.Module, demos: Mapping[str, list[Demo]], task: str, memory_field: str = "memory"):
        super().__init__()
        self.agent, self.served, self.task, self.memory_field = agent, dict(demos), task, memory_field

    def _examples(self, demos: list[Demo]) -> list[dspy.Example]:
        blank = {self.memory_field: ""}
        return [
            dspy.Example(**{**d.inputs, **(blank if self.memory_field in d.inputs else {})}, **d.outputs) for d in demos
        ]

    def _swap_in(self) -> dict[str, list]:
        own = {}
        for name, predictor in self.agent.named_predictors():
            own[name] = predictor.demos
            if self.served.get(name):
                predictor.demos = self._examples(self.served[name]) + list(predictor.demos)
        return own

    def _restore(self, own: dict[str, list]) -> None:
        for name, predictor in self.agent.named_predictors():
            if name in own:
                predictor.demos = own[name]

    def _finish(self, prediction: Any, trace: list, inputs: dict[str, Any]) -> dspy.Prediction:
        outputs = output_fields(prediction)
        trajectory = trajectory_of(outputs, self.task, inputs)
        calls = [c.model_dump() for c in recorded_calls(self.agent, trace)]
        outputs["trajectory"] = trajectory.model_copy(update={"metadata": {**trajectory.metadata, DEMOS_KEY: calls}})
        return dspy.Prediction(**outputs)

    def forward(self, **inputs: Any) -> dspy.Prediction:
        own = self._swap_in()
        try:
            with dspy.context(trace=[]):
                prediction = self.agent(**inputs)
                trace = list(dspy.settings.trace)
        finally:
            self._restore(own)
        return self._finish(prediction, trace, inputs)

    async def aforward(self, **inputs: Any) -> dspy.Prediction:
        own = self._swap_in()
        try:
            with dspy.context(trace=[]):
                prediction = await self.agent.acall(**inputs)
                trace = list(dspy.settings.trace)
        finally:
            self._restore(own)
        return self._finish(prediction, trace, inputs)


class DemoWriter(RecordsEpisodes, ExemplarWriter):
    """A won episode is one item: its actions as a compact exemplar (what retrieval embeds and a
    reader sees) and its recorded predictor calls as `demos`. An episode that recorded none (an
    agent with no predictors) writes nothing: there is nothing to serve.

    In a world that persists every judged episode, won or not, is also stored as its record (where
    it went, what it saw: `action_record`, "auto" by default, as the Extractor records), so the map
    of the world learns from every episode, as under rbdspy's default bank; a record carries no
    demos and is never served as one (`DemoMemory` serves only items that carry demos)."""

    def __init__(self, action_record: bool | str = RECORD_BY_WORLD):
        super().__init__()
        self._action_record = check_mode(action_record)

    def _plan(self, task: str, trajectory: Any, verdict: Verdict | str) -> Plan:
        written = yield from super()._plan(task, trajectory, verdict)
        records = self.records(task, trajectory, verdict)
        return dspy.Prediction(lessons=[*written.lessons, *records], kind=written.kind)

    def _finish(self, lesson: Lesson, trajectory: Trajectory) -> Lesson | None:
        calls = trajectory.metadata.get(DEMOS_KEY) or []
        demos = [Demo.model_validate(c) for c in calls]
        return lesson.model_copy(update={"demos": demos}) if demos else None


def carries_demos(item: MemoryItem) -> bool:
    """Whether `item` is a won episode's demos (a record of the world is not)."""
    return bool(item.demos)


class DemoMemory(ReasoningBank):
    """The agent's own past successes served back to its predictors as demos (module docstring).

    Judged like ReasoningBank (or labelled by the environment with `trust_outcome=True`); its
    extractor is a `DemoWriter`, so a failure writes no demos (in a world that persists, every
    episode's record still feeds the map). Its retriever serves only items that carry demos. The
    memory block is empty: the demos are the memory. `max_demos`, `max_demo_chars`: at most this
    many demos per predictor and task, and at most this much of their text (`demos_by_predictor`:
    what is served must fit the LM's context beside the task). The other parts and options are ReasoningBank's.
    """

    def __init__(
        self,
        agent: dspy.Module,
        store: MemoryStore,
        *,
        extractor: DemoWriter | None = None,
        max_demos: int = DEFAULT_MAX_DEMOS,
        max_demo_chars: int = DEFAULT_MAX_DEMO_CHARS,
        **parts_and_options: Any,
    ):
        if extractor is not None and not isinstance(extractor, DemoWriter):
            raise TypeError(f"DemoMemory's extractor must be a DemoWriter; got {type(extractor).__name__}")
        if max_demos < 1:
            raise ValueError(f"max_demos must be at least 1; got {max_demos}")
        if max_demo_chars < 1:
            raise ValueError(f"max_demo_chars must be at least 1; got {max_demo_chars}")
        super().__init__(agent, store, extractor=extractor or DemoWriter(), **parts_and_options)
        # Only won episodes are served: the records of a world that persists feed its map alone.
        if isinstance(self.retriever, MemoryRetriever):
            self.retriever = self.retriever.serving(carries_demos)
        self.max_demos, self.max_demo_chars = max_demos, max_demo_chars

    def agent_inputs(self, task_inputs: dict[str, Any], used: list[MemoryItem], world: str | None = None):
        return super().agent_inputs(task_inputs, [], world)

    def reads_lessons(self, task_inputs: dict[str, Any]) -> bool:
        """Always: the memory reaches the agent's predictors as demos, not through the memory block,
        so whether the agent reads that block does not decide whether its episodes are judged."""
        return True

    def acting(self, recall: Recall) -> dspy.Module:
        demos = demos_by_predictor(recall.memories, self.max_demos, self.max_demo_chars)
        return ServedDemos(self.agent, demos, recall.task, self.memory_field)
