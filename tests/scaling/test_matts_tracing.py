"""One MaTTS call is one MLflow trace: with `mlflow.dspy.autolog()` on, the k rollouts, their
judges, the selector and the distiller all land as spans of the single trace the call opens,
for the concurrent `acall` (asyncio.gather) and for the plain call alike."""

import asyncio

import dspy
import mlflow
import pytest
from matts_testing import Agent, RolloutLM, lessons, script

from rbdspy import MaTTS, MemoryStore, ReasoningBank
from rbdspy.memory.embedders import HashEmbedder

TASK = "how many inches in three feet"


@pytest.fixture
def traced(tmp_path):
    """A private sqlite tracking store with DSPy autologging on, switched off afterwards."""
    old_uri = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(f"sqlite:///{tmp_path / 'mlflow.db'}")
    mlflow.set_experiment("matts-tracing")
    yield
    mlflow.dspy.autolog(disable=True)
    mlflow.set_tracking_uri(old_uri)


def agent_spans(trace):
    return [s for s in trace.data.spans if s.name.startswith("Agent.")]


@pytest.mark.parametrize("mode,call", [("parallel", "acall"), ("parallel", "call"), ("sequential", "acall")])
def test_one_matts_call_is_one_trace(traced, tmp_path, mode, call):
    k = 3
    lm = RolloutLM(
        script(
            select={"rationale": "-", "best_index": 1},
            contrast=lessons("Check units"),
            extract=lessons("Check units"),
            refine={"notes": "re-checked the units", "refined_answer": "right"},
        ),
        {0: "wrong", 1: "right", 2: "wrong"},
    )
    if mode == "sequential":  # one rollout on the configured LM itself, then k-1 refinements
        lm.answers = {**lm.answers, "## answer ##": {"answer": "wrong"}}
    dspy.configure(lm=lm)
    mlflow.dspy.autolog()
    store = MemoryStore(tmp_path / "bank", embedder=HashEmbedder(dim=64))
    mat = MaTTS(ReasoningBank(agent=Agent(), store=store), k=k, mode=mode)

    pred = asyncio.run(mat.acall(task=TASK)) if call == "acall" else mat(task=TASK)

    mlflow.flush_trace_async_logging()  # spans are exported in the background
    traces = mlflow.search_traces(return_type="list")
    assert len(traces) == 1, [t.info.trace_id for t in traces]
    spans = traces[0].data.spans
    roots = [s for s in spans if s.parent_id is None]
    assert [s.name for s in roots] == ["MaTTS.forward"] and traces[0].info.state == "OK"
    # Every rollout ran inside that trace (sequential: 1 rollout, then k-1 refiner calls).
    assert len(agent_spans(traces[0])) == (k if mode == "parallel" else 1)
    assert sum(s.span_type == "CHAT_MODEL" for s in spans) >= k
    if mode == "sequential":
        assert sum(s.name.startswith("TrajectoryRefiner.") for s in spans) == k - 1
    assert any(
        s.name.startswith(("ContrastiveDistiller.", "Extractor.", "SuccessExtractor.", "FailureExtractor."))
        for s in spans
    )
    assert pred.memories_added
    store.close()
