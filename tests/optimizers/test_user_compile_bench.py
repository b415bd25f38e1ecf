"""benchmarks/user_compile.py: the compile guide's recipe, measured. Its problems are right by
construction, its metric reads the user's number, and a run on a scripted LM writes both programs'
dev results, paired."""

import json
import re

import dspy
from dspy.utils import DummyLM

import rbdspy
from benchmarks import user_compile
from rbdspy.memory.embedders import HashEmbedder


def test_every_problem_counts_its_things_and_dev_names_other_animals():
    train, dev = user_compile.problems(4, 6, seed=3)
    for example in [*train, *dev]:
        counts = user_compile.LEGS if example.kind == "legs" else user_compile.WHEELS
        said = re.findall(r"(\d+) ([a-z]+)s\b", example.task)
        assert len(said) == 3 and int(example.answer) == sum(int(n) * counts[name] for n, name in said)
    train_animals = {name for ex in train for _, name in re.findall(r"(\d+) ([a-z]+)s\b", ex.task)}
    dev_animals = {name for ex in dev if ex.kind == "legs" for _, name in re.findall(r"(\d+) ([a-z]+)s\b", ex.task)}
    assert train_animals <= set(user_compile.TRAIN_ANIMALS) and not train_animals & dev_animals
    assert {ex.kind for ex in dev} == {"legs", "wheels"}


def test_the_metric_reads_the_first_number_of_the_answer():
    example = dspy.Example(task="...", answer="28")
    assert user_compile.number_right(example, dspy.Prediction(answer="28 legs in all"))
    assert not user_compile.number_right(example, dspy.Prediction(answer="There are 3 spiders, so 28"))
    assert not user_compile.number_right(example, dspy.Prediction(answer="many"))


def test_a_run_on_a_scripted_lm_compiles_then_plays_both_programs_on_dev(tmp_path, monkeypatch):
    train, _ = user_compile.problems(2, 2, seed=0)
    # Every call answers every field: the first train problem's count, a success, one lesson.
    reply = {
        "reasoning": "count each kind",
        "answer": train[0].answer,
        "verdict": "success",
        "rationale": "the count adds up",
        "lessons": [{"title": "Count by kind", "description": "When counting.", "content": "Multiply, then add."}],
    }
    monkeypatch.setattr(rbdspy, "make_lm", lambda spec: DummyLM([reply] * 60))
    monkeypatch.setattr(rbdspy, "make_embedder", lambda spec: HashEmbedder(dim=32))
    result = user_compile.main(["--train", "2", "--dev", "2", "--out", str(tmp_path)])

    assert result["demos"] == {"bank.agent.predict": 1}  # the bank's parts kept out
    assert set(result["played"]) == {"hand-written", "compiled"} and result["paired"]["n"] == 2
    saved = json.loads((tmp_path / "result.json").read_text())
    assert [r["kind"] for r in saved["played"]["compiled"]["rows"]] == ["legs", "wheels"]
    assert "python -m benchmarks.user_compile --lm local" in (tmp_path / "results.md").read_text()
