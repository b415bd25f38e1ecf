import asyncio
import copy
import json

import dspy
import pytest
from dspy.utils import DummyLM

from rbdspy import MemoryRetriever, MemoryStore, ReasoningBank, Trajectory
from rbdspy.memory.embedders import HashEmbedder

JUDGE_OK = {"verdict": "success", "rationale": "answer verified"}
JUDGE_FAIL = {"verdict": "failure", "rationale": "answer not verified"}


def lessons(*titles):
    return {
        "lessons": [
            {"title": t, "description": f"When {t.lower()} applies.", "content": f"Apply {t.lower()}."} for t in titles
        ]
    }


class RecordingAgent(dspy.Module):
    """A small agent that declares a memory input and remembers what it was shown."""

    def __init__(self):
        super().__init__()
        self.predict = dspy.Predict("task, memory -> answer")
        self.memories_seen = []

    def forward(self, task, memory):
        self.memories_seen.append(memory)
        return self.predict(task=task, memory=memory)


def test_full_loop_learns_then_retrieves_on_a_similar_task(store):
    agent = RecordingAgent()
    bank = ReasoningBank(agent=agent, store=store, retriever=MemoryRetriever(store, k=1))
    dspy.configure(
        lm=DummyLM(
            [
                {"answer": "42"},
                JUDGE_OK,
                lessons("Verify units", "Restate the goal"),
                {"answer": "43"},
                JUDGE_FAIL,
                lessons("Check the final value"),
            ]
        )
    )

    first = bank(task="convert twelve feet into inches")
    assert first.answer == "42" and first.verdict.label == "success"
    assert first.memories_used == [] and agent.memories_seen[0] == ""
    assert [i.title for i in first.memories_added] == ["Verify units", "Restate the goal"]
    assert all(
        i.source == "success" and i.provenance[0].task == "convert twelve feet into inches"
        for i in first.memories_added
    )
    assert len(store) == 2

    second = bank(task="convert twelve yards into inches")
    assert len(second.memories_used) == 1
    used = second.memories_used[0]
    assert used.title in agent.memories_seen[1]  # the block really reached the agent
    assert second.verdict.label == "failure" and second.memories_added[0].source == "failure"
    assert store.get(used.id).use_count == 1 and store.get(used.id).last_used_at is not None
    assert len(store) == 3
    assert isinstance(second.trajectory, Trajectory) and "yards" in second.trajectory.render()


def test_indeterminate_judge_writes_nothing_and_does_not_raise(store):
    bank = ReasoningBank(agent=RecordingAgent(), store=store)
    dspy.configure(lm=DummyLM([{"answer": "a"}] + [{"verdict": "no idea"}] * 3))
    pred = bank(task="anything")
    assert pred.answer == "a" and pred.verdict.label == "indeterminate"
    assert pred.memories_added == [] and len(store) == 0


def test_garbage_extraction_writes_nothing(store):
    bank = ReasoningBank(agent=RecordingAgent(), store=store)
    dspy.configure(lm=DummyLM([{"answer": "a"}, JUDGE_OK] + [{"lessons": "<<garbage>>"}] * 3))
    pred = bank(task="anything")
    assert pred.verdict.label == "success" and pred.memories_added == [] and len(store) == 0


def test_ingest_with_known_outcome_skips_the_judge(store):
    bank = ReasoningBank(agent=RecordingAgent(), store=store)
    lm = DummyLM([lessons("Avoid repeating a failed action")])
    dspy.configure(lm=lm)
    traj = [{"role": "assistant", "content": "open door"}, {"role": "env", "content": "locked"}]
    pred = bank.ingest(traj, task="leave the room", outcome=False)
    assert pred.verdict.label == "failure" and pred.verdict.source == "ground_truth"
    assert len(lm.history) == 1 and "failed" in lm.history[0]["messages"][0]["content"]
    assert pred.memories_added[0].source == "failure" and len(store) == 1


def test_ingest_requires_a_task(store):
    bank = ReasoningBank(agent=RecordingAgent(), store=store)
    with pytest.raises(ValueError, match="needs the task"):
        bank.ingest([{"role": "user", "content": "x"}])


def test_trust_outcome_uses_the_environment_label():
    class EnvLikeAgent(dspy.Module):
        def forward(self, task, memory):
            return dspy.Prediction(answer="done", trajectory=Trajectory(task=task, steps=[], outcome=True))

    bank = ReasoningBank(agent=EnvLikeAgent(), store=_NullStore(), trust_outcome=True)
    lm = DummyLM([{"lessons": []}])
    dspy.configure(lm=lm)
    pred = bank(task="t")
    assert pred.verdict.source == "ground_truth" and pred.verdict.is_success
    assert len(lm.history) == 1  # the extractor only


class _NullStore:
    def __len__(self):
        return 0

    def record_use(self, ids, **_):
        pass


def test_agent_without_a_memory_input_is_rejected_at_construction(store):
    with pytest.raises(ValueError, match="no input named 'memory'"):
        ReasoningBank(agent=dspy.Predict("task -> answer"), store=store)
    ReasoningBank(agent=dspy.ChainOfThought("task, notes -> answer"), store=store, memory_field="notes")
    with pytest.raises(TypeError, match="dspy.Module"):
        ReasoningBank(agent=lambda task: task, store=store)


def test_caller_cannot_pass_the_memory_field(store):
    bank = ReasoningBank(agent=dspy.Predict("task, memory -> answer"), store=store)
    with pytest.raises(ValueError, match="filled by the bank"):
        bank(task="t", memory="sneaky")


def test_react_style_trajectory_is_what_gets_judged(store):
    class ReActLike(dspy.Module):
        def forward(self, question, memory):
            return dspy.Prediction(
                answer="Paris",
                trajectory={
                    "thought_0": "search it",
                    "tool_name_0": "search",
                    "tool_args_0": {"q": "capital"},
                    "observation_0": "Paris is the capital",
                },
            )

    lm = DummyLM([JUDGE_OK, lessons("Search before answering")])
    dspy.configure(lm=lm)
    pred = ReasoningBank(agent=ReActLike(), store=store)(question="capital of France?")
    assert "Paris is the capital" in lm.history[0]["messages"][-1]["content"]
    assert pred.trajectory.final_answer == "answer: Paris" and pred.answer == "Paris"


def test_scope_isolation_in_the_loop(tmp_path):
    store = MemoryStore(tmp_path / "b", embedder=HashEmbedder(dim=64))
    a = ReasoningBank(agent=RecordingAgent(), store=store, scope="shop")
    b = ReasoningBank(agent=RecordingAgent(), store=store, scope="forum")
    dspy.configure(
        lm=DummyLM(
            [{"answer": "x"}, JUDGE_OK, lessons("Shop lesson"), {"answer": "y"}, JUDGE_OK, lessons("Forum lesson")]
        )
    )
    a(task="buy a red kettle")
    pred = b(task="buy a red kettle")
    assert pred.memories_used == []  # the identical task in another scope is invisible
    assert [i.title for i in a.retrieve("buy a red kettle", k=5)] == ["Shop lesson"]
    assert {i.scope for i in store.list()} == {"shop", "forum"}
    store.close()


def test_async_loop(store):
    bank = ReasoningBank(agent=RecordingAgent(), store=store)
    dspy.configure(lm=DummyLM([{"answer": "a"}, JUDGE_OK, lessons("Async lesson")]))
    pred = asyncio.run(bank.acall(task="do it asynchronously"))
    assert pred.verdict.is_success and [i.title for i in pred.memories_added] == ["Async lesson"] and len(store) == 1


def test_named_predictors_expose_the_learners(store):
    names = [n for n, _ in ReasoningBank(agent=RecordingAgent(), store=store).named_predictors()]
    for expected in (
        "agent.predict",
        "judge.last_steps_verdict",  # the default judge's one question (rbdspy.Judge, the probability judge)
        "extractor.success",
        "extractor.failure",
        "distiller.contrast",
    ):
        assert expected in names


def test_deepcopy_shares_the_store_never_copies_it(store):
    bank = ReasoningBank(agent=RecordingAgent(), store=store)
    for clone in (copy.deepcopy(bank), bank.deepcopy(), bank.reset_copy()):
        assert clone.store is store and clone.retriever.store is store
        assert clone.judge is not bank.judge


def test_save_load_round_trip_is_json_and_excludes_the_store(store, tmp_path):
    bank = ReasoningBank(agent=RecordingAgent(), store=store)
    judged = bank.judge.last_steps_verdict
    judged.signature = judged.signature.with_instructions("Be very strict.")
    bank.extractor.failure.demos = [dspy.Example(task="t", trajectory="x", judge_rationale="r", lessons=[])]
    path = tmp_path / "bank.json"
    bank.save(path)
    saved = json.loads(path.read_text())
    assert "judge.last_steps_verdict" in saved and not any("store" in key or "retriever" in key for key in saved)
    fresh = ReasoningBank(agent=RecordingAgent(), store=store)
    fresh.load(path)
    assert fresh.judge.last_steps_verdict.signature.instructions == "Be very strict."
    assert len(fresh.extractor.failure.demos) == 1
    with pytest.raises(ValueError, match="JSON"):
        bank.save(tmp_path / "bank.pkl")
    with pytest.raises(ValueError, match="never pickle"):
        fresh.load(tmp_path / "bank.pkl")


def test_embedded_in_a_larger_program_and_compiled_by_an_optimizer(store):
    class Pipeline(dspy.Module):
        def __init__(self, bank):
            super().__init__()
            self.bank = bank
            self.polish = dspy.Predict("draft -> answer")

        def forward(self, task):
            draft = self.bank(task=task)
            return self.polish(draft=draft.answer)

    program = Pipeline(ReasoningBank(agent=RecordingAgent(), store=store))
    names = [n for n, _ in program.named_predictors()]
    assert "bank.judge.last_steps_verdict" in names and "polish" in names

    trainset = [dspy.Example(task="add two and two", answer="4").with_inputs("task")]
    compiled = dspy.LabeledFewShot(k=1).compile(program, trainset=trainset)
    assert compiled.bank.store is store and compiled is not program
    dspy.configure(lm=DummyLM([{"answer": "draft"}, JUDGE_OK, lessons("Polish lesson"), {"answer": "4"}]))
    assert compiled(task="add three and three").answer == "4"
    assert len(store) == 1
