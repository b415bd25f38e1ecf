"""MaTTS around a bank whose memory is the agent's own won episodes (`DemoMemory`, the default for a
user's program): every rollout is played with the demos the bank serves, and each won rollout is
kept as its own item; no contrast is written that such a bank would never serve."""

from __future__ import annotations

import dspy
from dspy.utils import DummyLM
from dspy.utils.callback import BaseCallback

from rbdspy.loop.demo_memory import DemoMemory
from rbdspy.loop.retriever import MemoryRetriever
from rbdspy.memory import MemoryStore
from rbdspy.memory.embedders import HashEmbedder
from rbdspy.scaling.matts import MaTTS, keeps_episodes
from tests.loop.agents_testing import OneStepAgent
from tests.scaling.matts_testing import RolloutLM


def by_rollout(actions: dict, select: int = 0) -> RolloutLM:
    """The agent's action by rollout id (a sampling LM's rollouts differ); the selector answers as scripted."""
    return RolloutLM({"## best_index ##": {"rationale": "it won", "best_index": select}}, actions, field="action")


class CountedDistiller(dspy.Module):
    """Stands where the contrastive distiller stands, counting its calls."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, **inputs):
        self.calls += 1
        return dspy.Prediction(lessons=[])


class Prompts(BaseCallback):
    """Every LM call's whole prompt, by rollout id."""

    def __init__(self):
        self.calls = []

    def on_lm_start(self, call_id, instance, inputs):
        prompt = "\n".join(str(m["content"]) for m in inputs.get("messages") or [])
        self.calls.append((instance.kwargs.get("rollout_id"), prompt))


def _bank(store):
    retriever = MemoryRetriever(store, k=1, min_similarity=None)
    return DemoMemory(OneStepAgent(), store, retriever=retriever, trust_outcome=True)


def test_each_won_rollout_is_kept_as_demos_and_no_contrast_is_asked(tmp_path):
    with MemoryStore(tmp_path / "bank", HashEmbedder(dim=32)) as store:
        bank = _bank(store)
        assert keeps_episodes(bank)
        bank.distiller = CountedDistiller()
        with dspy.context(lm=by_rollout({0: "win", 1: "lose", 2: "win"})):
            pred = MaTTS(bank, k=3)(task="open the blue door")
        assert [r.trajectory.outcome for r in pred.rollouts] == [True, False, True]
        assert pred.memories_added, "a won rollout writes its demos"
        assert all(item.demos and item.demos[0].outputs == {"action": "win"} for item in pred.memories_added)
        assert bank.distiller.calls == 0


def test_every_rollout_is_played_with_the_demos_the_bank_serves(tmp_path):
    with MemoryStore(tmp_path / "bank", HashEmbedder(dim=32)) as store:
        bank = _bank(store)
        with dspy.context(lm=DummyLM([{"action": "win"}])):
            bank(task="open the blue door")  # a won episode: the demo served next
        prompts = Prompts()
        with dspy.context(lm=by_rollout({0: "lose", 1: "lose"}), callbacks=[prompts]):
            pred = MaTTS(bank, k=2)(task="open the green door")
        rollouts = [prompt for rollout_id, prompt in prompts.calls if rollout_id in (0, 1)]
        assert len(rollouts) == 2
        assert all("open the blue door" in prompt for prompt in rollouts)
        assert [m.task for m in pred.memories_used] == ["open the blue door"]
        assert pred.memories_added == []  # both rollouts lost: nothing kept
