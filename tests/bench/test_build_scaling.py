"""MaTTS on the build tasks only: a build task is played by k rollouts, every other task once by
the bank itself."""

from __future__ import annotations

import dspy
from dspy.utils import DummyLM

from rbdspy.bench.arms import ARM_SETS, ARMS, BuildContext
from rbdspy.bench.build_scaling import BuildTimeScaling
from rbdspy.bench.tasks import BenchTask
from rbdspy.loop.reasoning_bank import ReasoningBank
from rbdspy.memory import MemoryStore
from rbdspy.memory.embedders import HashEmbedder


class Solver(dspy.Module):
    def __init__(self):
        super().__init__()
        self.predict = dspy.Predict("task, memory -> answer")
        self.calls = 0

    def forward(self, task, memory, task_id=None):
        self.calls += 1
        return self.predict(task=task, memory=memory)


ANSWERS = {
    "## best_index ##": {"rationale": "r", "best_index": 0},
    "## answer ##": {"answer": "4"},
    "## verdict ##": {"verdict": "success"},
    "## lessons ##": {"lessons": []},
    "## attempts ##": {"lessons": []},
}


def test_a_build_task_is_played_by_k_rollouts_and_a_measured_task_once(tmp_path):
    with MemoryStore(tmp_path / "bank", HashEmbedder(dim=32)) as store:
        solver = Solver()
        program = BuildTimeScaling(ReasoningBank(solver, store), build_ids=["t/train/1"], k=3)
        with dspy.context(lm=DummyLM(ANSWERS)):
            built = program(task="2 + 2?", task_id="t/train/1")
            assert solver.calls == 3 and len(built.rollouts) == 3
            measured = program(task="2 + 2?", task_id="t/dev/1")
        assert solver.calls == 4 and "rollouts" not in measured


def test_the_scaling_arms_take_the_streams_build_tasks(tmp_path):
    stream = (
        BenchTask(index=0, task_id="t/train/1", phase="build", task_type="t"),
        BenchTask(index=1, task_id="t/dev/1", phase="measure", task_type="t"),
    )
    with MemoryStore(tmp_path / "bank", HashEmbedder(dim=32)) as store:
        program = ARMS["improved-build-k5"].build(BuildContext(agent=Solver(), store=store, stream=stream))
    assert program.build_ids == {"t/train/1"} and program.scaled.k == 5
    assert ARM_SETS["build-scaling"][-3:] == ["improved-build-k3", "improved-build-k5", "improved-build-seq-k3"]
    with MemoryStore(tmp_path / "seq", HashEmbedder(dim=32)) as store:
        sequential = ARMS["improved-build-seq-k3"].build(BuildContext(agent=Solver(), store=store, stream=stream))
    assert sequential.scaled.mode == "sequential" and sequential.scaled.k == 3
    assert sequential.build_ids == {"t/train/1"}


def test_the_demo_scaling_arms_wrap_the_own_agent_default(tmp_path):
    from rbdspy.loop.demo_memory import DemoMemory
    from rbdspy.scaling.matts import MaTTS

    stream = (BenchTask(index=0, task_id="t/train/1", phase="build", task_type="t"),)
    with MemoryStore(tmp_path / "bank", HashEmbedder(dim=32)) as store:
        context = BuildContext(agent=Solver(), store=store, stream=stream)
        built = ARMS["demo-build-k3"].build(context)
        every_task = ARMS["demo-matts-k3"].build(context)
    assert isinstance(built.bank, DemoMemory) and built.scaled.k == 3 and built.build_ids == {"t/train/1"}
    assert isinstance(every_task, MaTTS) and isinstance(every_task.bank, DemoMemory) and every_task.k == 3
    # the first rollout is the one demo-memory plays alone: k=1 is demo-memory
    assert built.scaled.plain_first and every_task.plain_first and built.scaled.draws[0] == (None, None)
    assert ARM_SETS["demo-scaling"] == ["no-memory", "demo-memory", "demo-build-k3", "demo-build-k5"]
    assert not built.bank.trust_outcome


def test_the_oracle_demo_scaling_arms_label_with_the_environment(tmp_path):
    stream = (BenchTask(index=0, task_id="t/train/1", phase="build", task_type="t"),)
    with MemoryStore(tmp_path / "bank", HashEmbedder(dim=32)) as store:
        built = ARMS["demo-build-oracle-k5"].build(BuildContext(agent=Solver(), store=store, stream=stream))
    assert built.bank.trust_outcome and built.scaled.k == 5 and built.build_ids == {"t/train/1"}
    # MaTTS reads the bank's flag: each rollout is labelled by its outcome, not the judge
    assert built.scaled._outcomes([]) == []
    assert ARM_SETS["demo-scaling-oracle"][1:] == ["demo-memory-oracle", "demo-build-oracle-k3", "demo-build-oracle-k5"]
