"""Compiled prompts: none shipped, loaded from a compile's output or a saved bank, JSON only."""

from pathlib import Path

import dspy
import pytest
from dspy.utils import DummyLM

from rbdspy import MemoryStore, ReasoningBank
from rbdspy.judge.judge import Judge
from rbdspy.lessons.extractor import Extractor
from rbdspy.loop import compiled_prompts

TUNED = "Tuned judge instruction."


def agent():
    return dspy.Predict("task, memory -> answer")


def write_compiled(directory: Path, judge=True, extractors=False) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    if judge:
        j = Judge()
        j.last_steps_verdict.signature = j.last_steps_verdict.signature.with_instructions(TUNED)
        j.save(str(directory / "judge.json"))
    if extractors:
        e = Extractor()
        e.failure.signature = e.failure.signature.with_instructions("Tuned failure extractor.")
        e.save(str(directory / "extractors.json"))
    return directory


@pytest.fixture
def store(tmp_path, hash_embedder):
    with MemoryStore(tmp_path / "bank", embedder=hash_embedder) as s:
        yield s


def test_a_bank_runs_on_the_hand_written_prompts_unless_given_compiled_ones(tmp_path, store):
    bank = ReasoningBank(agent(), store)
    assert bank.judge.last_steps_verdict.signature.instructions == Judge().last_steps_verdict.signature.instructions
    assert bank.compiled_from == []
    compiled = ReasoningBank(agent(), store, compiled=write_compiled(tmp_path / "c", extractors=True))
    assert compiled.judge.last_steps_verdict.signature.instructions == TUNED
    assert compiled.extractor.failure.signature.instructions == "Tuned failure extractor."
    assert len(compiled.compiled_from) == 2


def test_the_package_ships_no_compiled_prompts():
    assert not hasattr(compiled_prompts, "DEFAULT") and not hasattr(compiled_prompts, "PACKAGE_COMPILED_DIR")
    assert not (Path(compiled_prompts.__file__).parents[1] / "compiled").exists()


def test_a_compiled_extractor_file_is_not_loaded_into_another_kind_of_extractor(tmp_path, store, caplog):
    from rbdspy.bench.baselines import WorkflowMemory

    directory = write_compiled(tmp_path / "c", extractors=True)
    with caplog.at_level("WARNING"):
        memory = WorkflowMemory(agent(), store, compiled=directory)
    assert memory.compiled_from == [str(directory / "judge.json")]
    assert "not the Extractor it was compiled for" in caplog.text


def test_an_explicit_directory_must_hold_something(tmp_path, store):
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="judge.json, extractors.json"):
        ReasoningBank(agent(), store, compiled=tmp_path / "empty")
    with pytest.raises(FileNotFoundError):
        ReasoningBank(agent(), store, compiled=tmp_path / "absent")


def test_a_file_for_the_wrong_component_is_named(tmp_path, store):
    Extractor().save(str(tmp_path / "judge.json"))
    with pytest.raises(ValueError, match=r"judge\.json is not a compiled ProbabilityJudge"):
        ReasoningBank(agent(), store, compiled=tmp_path)


def test_a_whole_bank_json_is_accepted_and_pickle_never(tmp_path, store):
    source = ReasoningBank(agent(), store, compiled=write_compiled(tmp_path / "c"))
    source.save(tmp_path / "bank.json")
    bank = ReasoningBank(agent(), store, compiled=tmp_path / "bank.json")
    assert bank.judge.last_steps_verdict.signature.instructions == TUNED
    with pytest.raises(ValueError, match="JSON only"):
        bank.load(tmp_path / "bank.pkl", allow_pickle=True)
    for wrong in (3, True, False):
        with pytest.raises(TypeError, match="compiled must be"):
            ReasoningBank(agent(), store, compiled=wrong)


def test_compiled_prompts_are_what_the_lm_is_sent(tmp_path, store):
    lm = DummyLM([{"rationale": "ok", "verdict": "success"}])
    dspy.configure(lm=lm)
    bank = ReasoningBank(agent(), store, compiled=write_compiled(tmp_path / "c"))
    bank.judge(task="t", trajectory=[{"role": "user", "content": "x"}])
    assert TUNED in lm.history[-1]["messages"][0]["content"]


def test_extractor_reports_the_raw_drafts_it_clipped():
    long = {"title": "T", "description": "When so.", "content": "x" * 1500}
    dspy.configure(lm=DummyLM([{"lessons": [long]}]))
    pred = Extractor()(task="t", trajectory=[{"role": "user", "content": "x"}], verdict="success")
    assert len(pred.lessons[0].content) <= 1000 and len(pred.drafts[0].content) == 1500
