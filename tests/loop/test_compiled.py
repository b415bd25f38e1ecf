"""Compiled prompts: shipped by default, loaded from a compile's output, opted out of, JSON only."""

import shutil
import subprocess
import sys
import zipfile
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


def test_the_shipped_directory_is_loaded_by_default(tmp_path, store, monkeypatch):
    shipped = write_compiled(tmp_path / "shipped", extractors=True)
    monkeypatch.setattr(compiled_prompts, "PACKAGE_COMPILED_DIR", shipped)
    bank = ReasoningBank(agent(), store)
    assert bank.judge.last_steps_verdict.signature.instructions == TUNED
    assert bank.extractor.failure.signature.instructions == "Tuned failure extractor."
    assert len(bank.compiled_from) == 2


@pytest.mark.parametrize("opt_out", [None, False])
def test_opting_out_keeps_the_hand_written_prompts(tmp_path, store, monkeypatch, opt_out):
    monkeypatch.setattr(compiled_prompts, "PACKAGE_COMPILED_DIR", write_compiled(tmp_path / "shipped"))
    bank = ReasoningBank(agent(), store, compiled=opt_out)
    assert bank.judge.last_steps_verdict.signature.instructions == Judge().last_steps_verdict.signature.instructions
    assert bank.compiled_from == []


def test_an_empty_or_missing_shipped_directory_is_fine(tmp_path, store, monkeypatch):
    monkeypatch.setattr(compiled_prompts, "PACKAGE_COMPILED_DIR", tmp_path / "nothing")
    assert ReasoningBank(agent(), store).compiled_from == []


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
    with pytest.raises(TypeError, match="compiled must be"):
        ReasoningBank(agent(), store, compiled=3)


def test_compiled_prompts_are_what_the_lm_is_sent(tmp_path, store):
    lm = DummyLM([{"rationale": "ok", "verdict": "success"}])
    dspy.configure(lm=lm)
    bank = ReasoningBank(agent(), store, compiled=write_compiled(tmp_path / "c"))
    bank.judge(task="t", trajectory=[{"role": "user", "content": "x"}])
    assert TUNED in lm.history[-1]["messages"][0]["content"]


@pytest.mark.timeout(120)
def test_the_built_wheel_ships_the_compiled_prompts(tmp_path):
    """Build the real wheel (from a copy of the sources, so the checkout gets no build/ or
    egg-info) and find every compiled prompt of rbdspy/compiled/ in it, byte for byte. A compiled
    file is added to the copy so the packaging rule is checked even while none is shipped."""
    pytest.importorskip("setuptools")
    repo = Path(__file__).parents[2]
    source = tmp_path / "src"
    shutil.copytree(repo / "rbdspy", source / "rbdspy", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(repo / name, source / name)
    write_compiled(source / "rbdspy" / "compiled", judge=False, extractors=True)
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q"]
    done = subprocess.run([*build, "-w", str(tmp_path / "dist"), str(source)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    [wheel] = (tmp_path / "dist").glob("rbdspy-*.whl")
    compiled_dir = source / "rbdspy" / "compiled"
    shipped = sorted(p.name for p in compiled_dir.glob("*.json"))
    assert "extractors.json" in shipped
    with zipfile.ZipFile(wheel) as archive:
        in_wheel = sorted(n.rsplit("/", 1)[1] for n in archive.namelist() if n.startswith("rbdspy/compiled/"))
        assert [n for n in in_wheel if n.endswith(".json")] == shipped
        for name in shipped:
            assert archive.read(f"rbdspy/compiled/{name}") == (compiled_dir / name).read_bytes()
    # and the package looks for them where the wheel puts them
    assert Path(compiled_prompts.__file__).parents[1] / "compiled" == compiled_prompts.PACKAGE_COMPILED_DIR


def test_extractor_reports_the_raw_drafts_it_clipped():
    long = {"title": "T", "description": "When so.", "content": "x" * 1500}
    dspy.configure(lm=DummyLM([{"lessons": [long]}]))
    pred = Extractor()(task="t", trajectory=[{"role": "user", "content": "x"}], verdict="success")
    assert len(pred.lessons[0].content) <= 1000 and len(pred.drafts[0].content) == 1500
