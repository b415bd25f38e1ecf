"""Embedders: the deterministic HashEmbedder and the as_embedder adapter."""

from __future__ import annotations

import dspy
import numpy as np
import pytest

from rbdspy.memory.embedders import Embedder, HashEmbedder, as_embedder


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


def test_hash_embedder_shape_norm_and_determinism(hash_embedder):
    texts = ["Open the red door", "open the red door!", "", "Bake a cake", "the a of"]
    vectors = hash_embedder(texts)
    assert vectors.shape == (5, 64) and vectors.dtype == np.float32
    norms = np.linalg.norm(vectors, axis=1)
    np.testing.assert_allclose(norms[[0, 1, 3]], 1.0, rtol=1e-6)
    assert norms[2] == 0.0 and norms[4] == 0.0  # nothing (but function words) to hash: zeros, not NaN
    np.testing.assert_array_equal(vectors[0], vectors[1])  # case and punctuation are not words
    np.testing.assert_array_equal(HashEmbedder(dim=64)(texts), vectors)  # a new instance agrees
    assert hash_embedder([]).shape == (0, 64)
    assert isinstance(hash_embedder, Embedder) and hash_embedder.name == "rbdspy-hash-v1"


def test_hash_embedder_is_stable_across_processes():
    # Golden values: Python's hash() is salted per process and would change these between runs.
    vector = HashEmbedder(dim=16)(["door"])[0]
    assert np.flatnonzero(vector).tolist() == [6] and vector[6] == pytest.approx(-1.0)


def test_hash_embedder_shared_words_are_closer(hash_embedder):
    query, near, far = hash_embedder(
        [
            "open the locked red door with a key",
            "find the key to open the red door",
            "bake a chocolate cake in the oven",
        ]
    )
    assert cosine(query, near) > cosine(query, far) + 0.2
    assert cosine(query, query) == pytest.approx(1.0, abs=1e-6)


def test_hash_embedder_rejects_bad_input():
    with pytest.raises(TypeError, match=r"\[text\]"):
        HashEmbedder()("a single string")
    with pytest.raises(ValueError, match="dim"):
        HashEmbedder(dim=1)


def test_as_embedder_passes_protocol_objects_through(hash_embedder):
    assert as_embedder(hash_embedder) is hash_embedder
    renamed = as_embedder(hash_embedder, name="custom")
    assert renamed is not hash_embedder and renamed.name == "custom" and renamed.dim == 64


def test_as_embedder_wraps_a_function_with_lazy_dim():
    calls = []

    def encode(texts):
        calls.append(texts)
        return [[float(len(t)), 1.0, 0.0] for t in texts]

    embedder = as_embedder(encode)
    assert embedder.name == "test_as_embedder_wraps_a_function_with_lazy_dim.<locals>.encode"
    assert calls == []  # nothing called until needed
    out = embedder(["ab", "abc"])
    assert out.shape == (2, 3) and out.dtype == np.float32 and embedder.dim == 3 and len(calls) == 1
    assert as_embedder(embedder) is embedder


def test_known_dim_never_probes(tmp_path, hash_embedder):
    from rbdspy.memory.embedders import known_dim
    from rbdspy.memory.store import MemoryStore

    calls = []

    def encode(texts):
        calls.append(texts)
        return np.ones((len(texts), 3))

    embedder = as_embedder(encode, name="ones")
    assert known_dim(embedder) is None and embedder.known_dim is None
    with MemoryStore(tmp_path / "bank", embedder=embedder):  # the open-time check does not probe either
        pass
    assert calls == []
    embedder(["x"])
    assert known_dim(embedder) == 3 and known_dim(hash_embedder) == hash_embedder.dim
    assert known_dim(as_embedder(encode, name="ones", dim=3)) == 3


def test_as_embedder_probes_dim_when_asked_first():
    embedder = as_embedder(lambda texts: np.zeros((len(texts), 5)), name="zeros")
    assert embedder.dim == 5 and embedder.name == "zeros"


def test_as_embedder_adapts_dspy_embedder():
    def encode(texts):
        return np.tile(np.arange(4, dtype=np.float32), (len(texts), 1))

    embedder = as_embedder(dspy.Embedder(encode, caching=False))
    assert embedder.name.endswith("encode")  # named from dspy.Embedder.model
    assert embedder(["one", "two"]).shape == (2, 4) and embedder.dim == 4
    assert (
        as_embedder(dspy.Embedder(encode), name="openai/text-embedding-3-small").name == "openai/text-embedding-3-small"
    )


def test_as_embedder_errors():
    with pytest.raises(TypeError, match="callable"):
        as_embedder("openai/text-embedding-3-small")
    with pytest.raises(TypeError, match="callable"):
        as_embedder(None)
    bad_shape = as_embedder(lambda texts: np.zeros((len(texts) + 1, 4)), name="bad")
    with pytest.raises(ValueError, match="shape"):
        bad_shape(["a", "b"])
    drifting = as_embedder(lambda texts: np.zeros((len(texts), len(texts[0]))), name="drift")
    drifting(["abc"])
    with pytest.raises(ValueError, match="dim"):
        drifting(["abcd"])
