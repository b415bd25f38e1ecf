"""A user's compile of a program that holds a bank: DSPy's optimizers tune the user's predictors
and leave the bank's judge, extractor and distiller as they are (`freeze_bank_parts`)."""

import dspy
import pytest
from dspy.utils import DummyLM

from rbdspy import MaTTS, MemoryStore, ReasoningBank
from rbdspy.memory.embedders import HashEmbedder
from rbdspy.optimizers import freeze_bank_parts

JUDGE_OK = {"verdict": "success", "rationale": "the sum is right"}
LESSON = {"lessons": [{"title": "Add", "description": "When adding.", "content": "Add the two numbers."}]}


class Adder(dspy.Module):
    def __init__(self):
        super().__init__()
        self.step = dspy.Predict("task, memory -> answer")

    def forward(self, task, memory):
        return self.step(task=task, memory=memory)


class Solver(dspy.Module):
    """A user's program: a bank around their agent, and a step of their own after it."""

    def __init__(self, store):
        super().__init__()
        self.bank = ReasoningBank(Adder(), store)
        self.check = dspy.Predict("task, draft -> answer")

    def forward(self, task):
        draft = self.bank(task=task)
        return self.check(task=task, draft=draft.answer)


def exact(example, prediction, trace=None):
    return example.answer == prediction.answer


TRAIN = [dspy.Example(task=f"add {i} and {i}", answer=str(2 * i)).with_inputs("task") for i in (1, 2)]
# Each task: the agent's draft, the judge, the extractor, then the user's check.
ANSWERS = [{"answer": "2"}, JUDGE_OK, LESSON, {"answer": "2"}, {"answer": "4"}, JUDGE_OK, LESSON, {"answer": "4"}]


def store_at(path):
    return MemoryStore(path, embedder=HashEmbedder(dim=32))


def bootstrap(program):
    dspy.configure(lm=DummyLM(ANSWERS))
    optimizer = dspy.BootstrapFewShot(metric=exact, max_bootstrapped_demos=2, max_labeled_demos=0)
    return optimizer.compile(program, trainset=TRAIN)


def demos_by_name(program):
    return {name: len(p.demos) for name, p in program.named_predictors()}


def test_without_freezing_the_optimizer_gives_the_judge_its_own_verdicts_as_demos(tmp_path):
    compiled = bootstrap(Solver(store_at(tmp_path)))
    demos = demos_by_name(compiled)
    assert demos["bank.judge.last_steps_verdict"] == 2 and demos["bank.extractor.success"] == 2


def test_frozen_the_compile_tunes_the_users_predictors_only(tmp_path):
    program = freeze_bank_parts(Solver(store_at(tmp_path)))
    assert sorted(name for name, _ in program.named_predictors()) == ["bank.agent.step", "check"]
    compiled = bootstrap(program)
    assert demos_by_name(compiled) == {"bank.agent.step": 2, "check": 2}
    assert compiled.bank.judge.last_steps_verdict.demos == []
    assert compiled.bank.agent.step.demos[0].answer == "2"


def test_the_compiled_program_loads_into_a_program_over_another_store(tmp_path):
    scratch, live = store_at(tmp_path / "scratch"), store_at(tmp_path / "live")
    compiled = bootstrap(freeze_bank_parts(Solver(scratch)))
    compiled.save(str(tmp_path / "solver.json"))
    assert len(scratch) == 2 and len(live) == 0  # the compile's episodes went to the scratch store

    served = freeze_bank_parts(Solver(live))
    served.load(str(tmp_path / "solver.json"))
    assert [d["answer"] for d in served.bank.agent.step.demos] == ["2", "4"]
    assert served.bank.judge.last_steps_verdict.demos == []
    dspy.configure(lm=DummyLM([{"answer": "6"}, JUDGE_OK, LESSON, {"answer": "6"}]))
    assert served(task="add 3 and 3").answer == "6"
    assert len(live) == 1  # it learns into the store it was built on


def test_a_matts_keeps_its_selector_out_and_its_banks_agent_in(tmp_path):
    class Scaled(dspy.Module):
        def __init__(self):
            super().__init__()
            self.matts = MaTTS(ReasoningBank(Adder(), store_at(tmp_path)), k=2)

        def forward(self, task):
            return self.matts(task=task)

    names = [name for name, _ in freeze_bank_parts(Scaled()).named_predictors()]
    assert names == ["matts.bank.agent.step"]


def test_a_program_without_a_bank_is_refused_by_name():
    with pytest.raises(ValueError, match="ChainOfThought holds no ReasoningBank"):
        freeze_bank_parts(dspy.ChainOfThought("question -> answer"))
    with pytest.raises(TypeError, match="dspy.Module"):
        freeze_bank_parts("a program")
