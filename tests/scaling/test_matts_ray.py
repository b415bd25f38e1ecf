"""`MaTTS(..., executor="ray")`: the parallel rollouts run as Ray tasks on a small local cluster and
give what the in-process rollouts give (answers, verdicts, choice, lessons, counted LM calls); an
agent that cannot travel, sequential mode and a missing Ray are refused when MaTTS is built."""

import asyncio
import re
import sys
import threading

import dspy
import matts_testing
import pytest
from matts_testing import Agent, RolloutLM, lessons, script

from rbdspy import MaTTS, MemoryStore, ReasoningBank, VanillaTTS
from rbdspy.lm.usage import LmUsage
from rbdspy.memory.embedders import HashEmbedder
from rbdspy.ray_support import INSTALL_HINT, NotPicklableError, RayMissingError

TASK = "how many inches in three feet"
ANSWERS = script(select={"rationale": "1 is right", "best_index": 1}, contrast=lessons("Check units"))
BY_ROLLOUT = {0: "wrong", 1: "right", 2: "wrong again"}


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray")
    # The scripted LM and agent live in a test helper the workers cannot import: send them by value.
    ray.cloudpickle.register_pickle_by_value(matts_testing)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()
    ray.cloudpickle.unregister_pickle_by_value(matts_testing)


def _play(tmp_path, name, executor, call=None):
    dspy.configure(lm=RolloutLM(ANSWERS, BY_ROLLOUT))
    with MemoryStore(tmp_path / name, embedder=HashEmbedder(dim=64)) as store:
        matts = MaTTS(ReasoningBank(agent=Agent(), store=store), k=3, executor=executor)
        with LmUsage() as usage:
            pred = (call or (lambda m: m(task=TASK)))(matts)
        titles = [item.title for item in store.list()]
    return pred, usage, titles


def _summary(pred):
    return (
        [r.outputs for r in pred.rollouts],
        [(r.rollout_id, r.temperature) for r in pred.rollouts],
        [v.label for v in pred.verdicts],
        pred.chosen,
        pred.answer,
        [item.title for item in pred.memories_added],
    )


def test_ray_rollouts_give_what_local_rollouts_give(ray_cluster, tmp_path):
    local, local_usage, local_titles = _play(tmp_path, "local", "local")
    remote, remote_usage, remote_titles = _play(tmp_path, "ray", "ray")

    assert _summary(remote) == _summary(local)
    assert [r.outputs["answer"] for r in remote.rollouts] == ["wrong", "right", "wrong again"]
    assert remote_titles == local_titles == ["Check units"]
    assert remote_usage.calls == local_usage.calls == 3 + 3 + 1 + 1  # the rollouts' calls came back


def test_ray_rollouts_under_acall(ray_cluster, tmp_path):
    local, _, _ = _play(tmp_path, "local", "local")
    remote, _, _ = _play(tmp_path, "ray", "ray", call=lambda m: asyncio.run(m.acall(task=TASK)))
    assert _summary(remote) == _summary(local)


class _LockedAgent(Agent):
    def __init__(self):
        super().__init__()
        self.lock = threading.Lock()


def test_an_agent_that_cannot_travel_is_refused_when_matts_is_built(tmp_path):
    pytest.importorskip("ray")
    with MemoryStore(tmp_path / "bank", embedder=HashEmbedder(dim=64)) as store:
        with pytest.raises(NotPicklableError, match=r"the agent \(_LockedAgent\).*executor='local'"):
            MaTTS(ReasoningBank(agent=_LockedAgent(), store=store), executor="ray")
        with pytest.raises(ValueError, match="sequential mode has one rollout"):
            MaTTS(ReasoningBank(agent=Agent(), store=store), mode="sequential", executor="ray")
        with pytest.raises(ValueError, match="executor must be one of local, ray"):
            VanillaTTS(ReasoningBank(agent=Agent(), store=store), executor="dask")


def test_without_ray_executor_ray_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with MemoryStore(tmp_path / "bank", embedder=HashEmbedder(dim=64)) as store:
        with pytest.raises(RayMissingError, match=re.escape(INSTALL_HINT)):
            MaTTS(ReasoningBank(agent=Agent(), store=store), executor="ray")
        assert MaTTS(ReasoningBank(agent=Agent(), store=store)).executor == "local"  # the default needs no Ray
