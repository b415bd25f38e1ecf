"""The comparison memories (success-only, Synapse-style trajectories, AWM-style workflows,
no-memory) on a plain agent with known outcomes: what each writes, and which LM calls it makes."""

import dspy
from dspy.utils import DummyLM

from rbdspy.bench.baselines import NoMemory, SuccessOnlyBank, TrajectoryMemory, WorkflowMemory
from rbdspy.lessons.exemplar import render_exemplar
from rbdspy.memory import MemoryStore
from rbdspy.types import Step, Trajectory


def _agent():
    return dspy.Predict("task, memory -> answer")


def _env_trajectory(outcome):
    steps = [Step(role="env", content="You are in the kitchen. You see a fridge.")]
    for action, obs in (
        ("open fridge", "You open the fridge. " + "It is cold. " * 20),
        ("take apple", "You take the apple."),
    ):
        steps += [Step(role="agent", content=action), Step(role="env", content=obs)]
    return Trajectory(task="Take the apple from the fridge.", steps=steps, outcome=outcome)


def test_success_only_does_not_distil_failures(tmp_path, hash_embedder):
    lm = DummyLM(
        {"fields: `lessons`": {"lessons": [{"title": "T", "description": "D.", "content": "C."}]}},
        adapter=dspy.JSONAdapter(),
    )
    with MemoryStore(tmp_path / "b", embedder=hash_embedder) as store, dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        bank = SuccessOnlyBank(agent=_agent(), store=store, compiled=None)
        assert bank.ingest(_env_trajectory(False), outcome=False).memories_added == []
        assert len(lm.history) == 0  # no extraction call on a failure
        added = bank.ingest(_env_trajectory(True), outcome=True).memories_added
        assert [i.source for i in added] == ["success"] and len(lm.history) == 1


def test_trajectory_memory_stores_successful_episodes_as_exemplars(tmp_path, hash_embedder):
    with MemoryStore(tmp_path / "b", embedder=hash_embedder) as store:
        memory = TrajectoryMemory(agent=_agent(), store=store, compiled=None)
        assert memory.ingest(_env_trajectory(False), outcome=False).memories_added == []
        (item,) = memory.ingest(_env_trajectory(True), outcome=True).memories_added
        assert "> open fridge ->" in item.content and "> take apple -> You take the apple." in item.content
        assert item.task == "Take the apple from the fridge." and len(store) == 1
        assert memory.retrieve("Take the pear from the fridge.")[0].id == item.id


def test_exemplar_keeps_the_end_when_capped():
    text = render_exemplar(_env_trajectory(True), max_chars=60)
    assert len(text) == 60 and text.endswith("You take the apple.")


def test_workflow_memory_induces_a_workflow_from_successes_only(tmp_path, hash_embedder):
    answer = {
        "title": "Fetch from a container",
        "when_to_use": "Tasks that ask to take an item.",
        "steps": ["open the {container}", "take the {item}"],
    }
    lm = DummyLM({"fields: `title`, then `when_to_use`, then `steps`": answer}, adapter=dspy.JSONAdapter())
    with MemoryStore(tmp_path / "b", embedder=hash_embedder) as store, dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        memory = WorkflowMemory(agent=_agent(), store=store, compiled=None)
        assert memory.ingest(_env_trajectory(False), outcome=False).memories_added == [] and len(lm.history) == 0
        (item,) = memory.ingest(_env_trajectory(True), outcome=True).memories_added
    assert item.title == "Fetch from a container" and item.content == "1. open the {container} 2. take the {item}"


def test_workflow_memory_writes_nothing_from_garbage(tmp_path, hash_embedder):
    lm = DummyLM({"fields: `title`": {"title": "x", "when_to_use": "y", "steps": []}}, adapter=dspy.JSONAdapter())
    with MemoryStore(tmp_path / "b", embedder=hash_embedder) as store, dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        memory = WorkflowMemory(agent=_agent(), store=store, compiled=None)
        assert memory.ingest(_env_trajectory(True), outcome=True).memories_added == [] and len(store) == 0


def test_no_memory_passes_an_empty_block_and_judges_nothing():
    seen = []

    class Agent(dspy.Module):
        def forward(self, task, memory):
            seen.append(memory)
            return dspy.Prediction(answer="42")

    pred = NoMemory(Agent())(task="What is 6 x 7?")
    assert seen == [""] and pred.answer == "42" and pred.verdict is None and pred.memories_added == []
    assert pred.trajectory.task == "What is 6 x 7?"
