"""MaTTS through rbdspy's own local engine (against a fake llama.cpp server, no model): the
rollouts reach the engine sampled, each with its own seed, while the judge, selector and
contrast stay greedy."""

import json

import dspy

from rbdspy import MaTTS, MemoryStore, ReasoningBank
from rbdspy.lm.local_engine import AsyncLlamaEngine, LlamaEngine, RolloutSeedCallback
from rbdspy.memory.embedders import HashEmbedder


class FakeServer:
    def __init__(self):
        self.bodies = []

    def handle_chat_completions(self, body):
        self.bodies.append(json.loads(json.dumps(body)))
        last = body["messages"][-1]["content"]
        if "## best_index ##" in last:
            text = "[[ ## rationale ## ]]\nfine\n\n[[ ## best_index ## ]]\n0"
        elif "## attempts ##" in last:
            text = (
                '[[ ## lessons ## ]]\n[{"title": "Check units", "description": "When converting.", '
                '"content": "Verify the factor."}]'
            )
        elif "## verdict ##" in last:
            text = "[[ ## rationale ## ]]\nright\n\n[[ ## verdict ## ]]\nsuccess"
        else:
            text = "[[ ## answer ## ]]\n36"
        return {
            "id": "x",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": text + "\n\n[[ ## completed ## ]]"},
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }


def test_rollouts_reach_the_local_engine_sampled_with_distinct_seeds(tmp_path):
    server = FakeServer()
    engine = LlamaEngine("local-fast", server=server)
    lm = dspy.LM(
        "local/fake",
        engine=engine,
        async_engine=AsyncLlamaEngine(engine),
        callbacks=[RolloutSeedCallback()],
        cache=False,
    )
    dspy.configure(lm=lm)
    with MemoryStore(tmp_path / "bank", embedder=HashEmbedder(dim=64)) as store:
        pred = MaTTS(ReasoningBank(agent=dspy.Predict("task, memory -> answer"), store=store), k=3)(
            task="3 feet in inches"
        )

    agent = [b for b in server.bodies if "## answer ##" in b["messages"][-1]["content"]]
    others = [b for b in server.bodies if b not in agent]
    assert len(agent) == 3 and {b["temperature"] for b in agent} == {0.7}
    assert len({b["seed"] for b in agent}) == 3
    assert len(others) == 3 + 1 + 1 and {b["temperature"] for b in others} == {0.0}
    assert pred.answer == "36" and [i.source for i in pred.memories_added] == ["contrast"]
