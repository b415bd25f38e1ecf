"""Embedders: what turns text into the vectors the memory store indexes.

The store only needs a callable `texts -> (n, dim) float32 array` with a `name` and a `dim`
(the `Embedder` protocol), so that it can record which embedder built an index and refuse to mix
vectors from two different ones. `HashEmbedder` is the model-free, deterministic embedder used by
tests and offline demos; `as_embedder` adapts anything else (a `dspy.Embedder`, a
sentence-transformers `encode`, a plain function) to the protocol.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, Protocol, runtime_checkable

import numpy as np

from rbdspy.core.words import script_words

__all__ = ["Embedder", "HashEmbedder", "as_embedder", "known_dim"]


@runtime_checkable
class Embedder(Protocol):
    """Maps a list of texts to an (n, dim) float32 array. `name` identifies the model (and its
    version) so a store can tell when it is reopened with a different one; `dim` is the vector
    size."""

    dim: int
    name: str

    def __call__(self, texts: list[str]) -> np.ndarray: ...


# Function words carry no topic; left in, they make any two English sentences look alike.
_STOPWORDS_TEXT = (
    "a an and are as at be but by do for from has have i if in into is it its me my no not of on or our "
    "so than that the their then there these this to was we were what when where which while who will "
    "with you your"
)
_STOPWORDS = frozenset(_STOPWORDS_TEXT.split())


@lru_cache(maxsize=200_000)
def _bucket(feature: str, dim: int) -> tuple[int, float]:
    """The (index, sign) a feature hashes to. blake2b, not hash(): Python's string hash is
    salted per process, and vectors must be identical across processes and runs."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return (value >> 1) % dim, (1.0 if value & 1 else -1.0)


class HashEmbedder:
    """Deterministic bag of word unigrams and bigrams (lower-cased, English function words
    dropped), hashed into `dim` buckets with a sign (the hashing trick), L2-normalised.

    No model, no download: texts that share words get a higher cosine than unrelated texts, which
    is all the store's tests and offline demos need. It is not a semantic embedder.
    """

    version = 1

    def __init__(self, dim: int = 384, bigram_weight: float = 0.5):
        if not isinstance(dim, int) or dim < 2:
            raise ValueError(f"HashEmbedder dim must be an int >= 2, got {dim!r}.")
        self.dim = dim
        self.bigram_weight = float(bigram_weight)
        # The name is what a store records: anything that changes the vectors must change it.
        self.name = f"rbdspy-hash-v{self.version}" + (
            "" if self.bigram_weight == 0.5 else f"-bigram{self.bigram_weight:g}"
        )

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("HashEmbedder takes a list of strings, not a single string: wrap it as [text].")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            words = [w for w in script_words(str(text).lower()) if w not in _STOPWORDS]
            for word in words:
                index, sign = _bucket(word, self.dim)
                out[row, index] += sign
            if self.bigram_weight:
                for a, b in itertools.pairwise(words):
                    index, sign = _bucket(f"{a} {b}", self.dim)
                    out[row, index] += sign * self.bigram_weight
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out

    def __repr__(self) -> str:
        return f"HashEmbedder(dim={self.dim})"


class _CallableEmbedder:
    """Wraps any `texts -> array-like` callable so it satisfies the Embedder protocol.

    `dim` is discovered from the first call when the wrapped object does not expose it; reading
    `dim` before any call makes one probe call.
    """

    def __init__(self, fn: Callable[..., Any], name: str, dim: int | None):
        self._fn = fn
        self.name = name
        self._dim = dim

    @property
    def known_dim(self) -> int | None:
        """The dim if already known (given, or learned from a call), else None; never calls."""
        return self._dim

    @property
    def dim(self) -> int:
        if self._dim is None:
            self(["dimension probe"])
        assert self._dim is not None
        return self._dim

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        arr = as_rows(self._fn(texts), len(texts), self.name)
        if self._dim is None:
            self._dim = int(arr.shape[1])
        elif arr.shape[1] != self._dim:
            raise ValueError(f"Embedder {self.name!r} returned vectors of dim {arr.shape[1]}, expected {self._dim}.")
        return arr

    def __repr__(self) -> str:
        return f"as_embedder({self.name!r}, dim={self._dim})"


def as_rows(raw: Any, n: int, name: str) -> np.ndarray:
    """What an embedder returned for `n` texts as an (n, dim) float32 array (one 1-d vector for
    one text is accepted), or ValueError naming the embedder and the shape it returned."""
    arr = np.asarray(raw, dtype=np.float32)
    if arr.ndim == 1 and n == 1:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2 or arr.shape[0] != n:
        raise ValueError(
            f"Embedder {name!r} returned an array of shape {arr.shape} for {n} texts; expected ({n}, dim)."
        )
    return arr


def known_dim(embedder: Embedder) -> int | None:
    """`embedder.dim` without a probe call: None for a wrapped callable (see `as_embedder`)
    whose dim is not known until its first call."""
    if isinstance(embedder, _CallableEmbedder):
        return embedder.known_dim
    return int(embedder.dim)


def _name_of(obj: Any) -> str:
    name = getattr(obj, "name", None)
    if isinstance(name, str) and name:
        return name
    model = getattr(obj, "model", None)  # dspy.Embedder keeps its model string or callable here
    if isinstance(model, str) and model:
        return model
    if model is not None and callable(model):
        return _callable_name(model)
    return _callable_name(obj)


def _callable_name(fn: Any) -> str:
    owner = getattr(fn, "__self__", None)
    qualname = getattr(fn, "__qualname__", None)
    if owner is not None and qualname:
        model_name = getattr(owner, "name_or_path", None) or getattr(owner, "model_name", None)
        return f"{qualname}:{model_name}" if isinstance(model_name, str) and model_name else qualname
    return qualname or type(fn).__qualname__


def as_embedder(obj: Any, name: str | None = None, dim: int | None = None) -> Embedder:
    """Adapt `obj` to the Embedder protocol.

    Objects that already have an int `dim` and a str `name` are returned unchanged (unless `name`
    or `dim` is given to override them). Any other callable (a `dspy.Embedder`, a function, a bound
    `encode` method) is wrapped: its `dim` is taken from `dim`, a `dim` attribute, or else learned
    from the first call; its name from `name`, `.name`, `.model` (dspy.Embedder's model string) or
    the callable's qualified name. Give a `name` that identifies the model: the store records it
    and refuses to mix vectors from two embedders.
    """
    if obj is None or not callable(obj):
        raise TypeError(
            f"as_embedder needs a callable mapping list[str] to an (n, dim) array, such as "
            f"rbdspy.memory.HashEmbedder() or dspy.Embedder(...); got {type(obj).__name__}."
        )
    if name is not None and (not isinstance(name, str) or not name):
        raise ValueError(f"as_embedder name must be a non-empty string, got {name!r}.")
    if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int) or dim <= 0):
        raise ValueError(f"as_embedder dim must be a positive int, got {dim!r}.")
    if isinstance(obj, _CallableEmbedder) and name in (None, obj.name) and dim in (None, obj.known_dim):
        return obj  # already adapted (reading its .dim here would make a probe call)
    own_dim = getattr(obj, "dim", None)
    own_dim = own_dim if isinstance(own_dim, int) and not isinstance(own_dim, bool) else None
    own_name = getattr(obj, "name", None)
    if (
        own_dim is not None
        and isinstance(own_name, str)
        and own_name
        and name in (None, own_name)
        and dim in (None, own_dim)
    ):
        return obj
    return _CallableEmbedder(obj, name or _name_of(obj), dim or own_dim)
