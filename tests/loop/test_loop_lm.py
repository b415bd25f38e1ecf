"""The memory loop can run on its own LM: DSPy's per-module `set_lm` on the bank's judge and
extractor sends their calls there, while the agent keeps the configured LM."""

import dspy
from dspy.utils import DummyLM

from rbdspy import MemoryStore, ReasoningBank


def test_judge_and_extractor_use_the_lm_set_on_them(tmp_path, hash_embedder):
    agent_lm = DummyLM([{"answer": "42"}])
    lesson = {"title": "Check the product", "description": "When multiplying.", "content": "Multiply, then check."}
    loop_lm = DummyLM([{"rationale": "The answer is right.", "verdict": "success"}, {"lessons": [lesson]}])
    with MemoryStore(tmp_path / "bank", embedder=hash_embedder) as store:
        bank = ReasoningBank(dspy.Predict("task, memory -> answer"), store, compiled=None)
        bank.judge.set_lm(loop_lm)
        bank.extractor.set_lm(loop_lm)
        with dspy.context(lm=agent_lm):
            pred = bank(task="what is 6*7?")
        assert (len(agent_lm.history), len(loop_lm.history)) == (1, 2)
        assert pred.verdict.label == "success" and [i.title for i in store.list()] == ["Check the product"]
