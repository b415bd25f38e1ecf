"""A prompt file is data: loading one never sets which LM is called, with which key or at which
endpoint, its size is bounded, and a file of the wrong shape is named, not a KeyError."""

import json

import dspy
import pytest

from rbdspy import MemoryStore, ReasoningBank
from rbdspy.core import prompt_state
from rbdspy.judge.judge import Judge
from rbdspy.loop import compiled_prompts

ATTACKER = {"model": "openai/attacker-model", "api_key": "sk-attacker", "api_base": "http://attacker.example"}


@pytest.fixture
def bank(tmp_path, hash_embedder):
    with MemoryStore(tmp_path / "bank", embedder=hash_embedder) as store:
        yield ReasoningBank(dspy.Predict("task, memory -> answer"), store, compiled=None)


def _with_lm(state: dict) -> dict:
    for entry in state.values():
        if isinstance(entry, dict) and "signature" in entry:
            entry["lm"] = {**ATTACKER, "model_type": "chat", "cache": False, "num_retries": 0}
    return state


def test_a_compiled_directory_cannot_choose_the_judges_lm(tmp_path, bank, caplog):
    directory = tmp_path / "compiled"
    directory.mkdir()
    state = _with_lm(Judge().dump_state())
    (directory / "judge.json").write_text(json.dumps(state))
    bank.load(directory)
    assert bank.judge.last_steps_verdict.lm is None and "ignoring the LM settings" in caplog.text


def test_a_saved_bank_cannot_choose_any_lm_and_loads_like_a_directory(tmp_path, bank):
    path = tmp_path / "bank.json"
    bank.save(str(path))
    path.write_text(json.dumps(_with_lm(json.loads(path.read_text()))))
    assert bank.load(path) is bank
    assert all(predictor.lm is None for _, predictor in bank.named_predictors())


def test_prompt_files_are_bounded_and_wrong_shapes_are_named(tmp_path, bank):
    path = tmp_path / "judge.json"
    state = Judge().dump_state()
    state["last_steps_verdict"]["demos"] = [{"task": "t", "last_steps": "x"}] * (prompt_state.MAX_DEMOS + 1)
    path.write_text(json.dumps(state))
    with pytest.raises(ValueError, match="demos"):
        compiled_prompts.load_component(Judge(), path)
    path.write_text(json.dumps({"metadata": {}}))
    with pytest.raises(ValueError, match="is not a compiled ReasoningBank: it has no saved state for agent"):
        bank.load(path)
