"""One place that turns a spec string into a DSPy LM or an embedder.

Everything that picks a model (the CLI's --lm/--embedder, notebooks, benchmarks) goes through
``make_lm`` / ``make_embedder``, so the offline defaults, the environment variables and the
error messages are the same everywhere:

- ``make_lm()`` reads ``RBDSPY_LM`` (default "local"): "local" and "local-fast" are the
  embedded llama.cpp models; any other "provider/model" string is handed to ``dspy.LM``
  (LiteLLM routing: "openai/gpt-4o-mini", "ollama_chat/llama3", "openai/<name>" with
  ``api_base=``).
- ``make_embedder()`` reads ``RBDSPY_EMBEDDER`` (default "local"): "local" is MiniLM-L6
  offline, "hash" the deterministic test embedder, anything else a ``dspy.Embedder`` model.
"""

from __future__ import annotations

import difflib
import importlib.util
import os
from typing import Any
from urllib.parse import urlparse

import dspy

from rbdspy.lm.embedder_local import MiniLMEmbedder, minilm_model_dir
from rbdspy.lm.local_engine import AsyncLlamaEngine, LlamaEngine, RolloutSeedCallback
from rbdspy.lm.model_files import model_file
from rbdspy.memory.embedders import HashEmbedder, as_embedder

__all__ = ["LOCAL_SPECS", "make_embedder", "make_lm"]

LOCAL_SPECS = ("local", "local-fast")
_INSTALL_HINT = "pip install torch==2.13.0 && pip install 'rbdspy[local]'"
# Settings that belong to the embedded engine rather than to dspy.LM.
_ENGINE_KEYS = ("model_path", "n_ctx", "n_threads", "n_batch", "n_ubatch", "cache_ram_mib", "sampling")
_LOCAL_HOSTS = {"localhost", "127.0.0.1", "0.0.0.0", "::1", "host.docker.internal"}


def _bad_lm_spec(spec: Any, why: str) -> ValueError:
    near = difflib.get_close_matches(spec, LOCAL_SPECS, n=1) if isinstance(spec, str) else []
    hint = f" Did you mean {near[0]!r}?" if near else ""
    return ValueError(
        f"invalid LM spec {spec!r} ({why}).{hint} Set RBDSPY_LM or pass --lm with one of: "
        "'local' (embedded Qwen2.5-Coder-1.5B), 'local-fast' (embedded 0.5B), or a LiteLLM "
        "'provider/model' string such as 'openai/gpt-4o-mini', 'ollama_chat/llama3', or "
        "'openai/<name>' with api_base='http://localhost:8000/v1'."
    )


def _check_lm_spec(spec: Any) -> str:
    if not isinstance(spec, str) or not spec.strip():
        raise _bad_lm_spec(spec, "empty")
    spec = spec.strip()
    if spec in LOCAL_SPECS:
        return spec
    provider, slash, name = spec.partition("/")
    if not slash or not provider or not name.strip() or any(ch.isspace() for ch in spec):
        raise _bad_lm_spec(spec, "not 'local', 'local-fast' or 'provider/model'")
    known = _litellm_providers()
    if known and provider not in known:
        near = difflib.get_close_matches(provider, known, n=1)
        raise _bad_lm_spec(spec, f"LiteLLM has no provider {provider!r}" + (f"; {near[0]!r}?" if near else ""))
    return spec


def _litellm_providers() -> list[str]:
    """LiteLLM's provider names, so that a mistyped provider is refused before any work rather
    than at the first call (empty if LiteLLM cannot tell, and then nothing is refused here)."""
    try:
        import litellm  # heavy: LiteLLM (dspy loads it at the first LM call)

        return [str(getattr(p, "value", p)) for p in litellm.provider_list]
    except Exception:  # an unexpected LiteLLM version: leave the check to the first call
        return []


def _is_local_endpoint(spec: str, kw: dict) -> bool:
    base = kw.get("api_base") or kw.get("base_url")
    if base:
        return (urlparse(str(base)).hostname or "").lower() in _LOCAL_HOSTS
    return spec.split("/", 1)[0] in ("ollama", "ollama_chat")  # Ollama defaults to localhost


def make_lm(spec: str | None = None, **kw) -> Any:
    """A ``dspy.LM`` for ``spec`` (default: ``$RBDSPY_LM``, else "local").

    For "local"/"local-fast", ``model_path``, ``n_ctx``, ``n_threads``, ``n_batch``,
    ``n_ubatch``, ``cache_ram_mib`` and ``sampling`` (extra llama.cpp sampling fields) configure
    the engine; every other keyword goes to
    ``dspy.LM`` (``temperature``, ``max_tokens``, ``cache``, ``callbacks``, ...). The model
    file is joined and verified here, so a missing package fails now, with the pip command,
    rather than at the first call; the model itself loads on the first call.
    """
    spec = _check_lm_spec((os.environ.get("RBDSPY_LM") or "local") if spec is None else spec)
    if spec not in LOCAL_SPECS:
        engine_only = sorted(key for key in _ENGINE_KEYS if key in kw)
        if engine_only:
            raise ValueError(f"{engine_only} configure the embedded model ('local' / 'local-fast'), not {spec!r}")
        if _is_local_endpoint(spec, kw):
            # No network for LiteLLM's remote price list when the model is local anyway.
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        return dspy.LM(spec, **kw)

    if importlib.util.find_spec("xllamacpp") is None:
        raise ImportError(f"make_lm({spec!r}) runs llama.cpp in-process and needs xllamacpp: {_INSTALL_HINT}")
    engine = LlamaEngine(spec, **{key: kw.pop(key) for key in _ENGINE_KEYS if key in kw})
    engine.resolve_path()  # join + verify now: a missing part names its pip command here
    callbacks = [RolloutSeedCallback(), *(kw.pop("callbacks", None) or [])]
    # dspy.LM's default cap (4,000 tokens) lets a small model that starts repeating itself run for
    # minutes at ~11-22 tok/s; every rbdspy signature's answer fits well within 1,024.
    kw.setdefault("max_tokens", 1024)
    return dspy.LM(
        f"local/{model_file(spec).name}",
        engine=engine,
        async_engine=AsyncLlamaEngine(engine),
        callbacks=callbacks,
        **kw,
    )


def make_embedder(spec: str | None = None) -> Any:
    """An embedder for ``spec`` (default: ``$RBDSPY_EMBEDDER``, else "local"): a callable
    list[str] -> float32 array (n, dim) with ``.dim`` and ``.name``."""
    spec = (os.environ.get("RBDSPY_EMBEDDER") or "local") if spec is None else spec
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(
            f"invalid embedder spec {spec!r} (empty). Set RBDSPY_EMBEDDER or pass --embedder with one of: "
            "'local' (MiniLM-L6, offline), 'hash' (deterministic, for tests), or a LiteLLM embedding "
            "model such as 'openai/text-embedding-3-small'."
        )
    spec = spec.strip()
    if spec == "local":
        if importlib.util.find_spec("sentence_transformers") is None:
            raise ImportError(f"make_embedder('local') needs sentence-transformers: {_INSTALL_HINT}")
        minilm_model_dir()  # the weights package is present, or ImportError with the command
        return MiniLMEmbedder()
    if spec == "hash":
        return HashEmbedder()
    if "/" not in spec or any(ch.isspace() for ch in spec):
        raise ValueError(
            f"invalid embedder spec {spec!r}. Set RBDSPY_EMBEDDER or pass --embedder with 'local', 'hash', "
            "or a LiteLLM 'provider/model' embedding model such as 'openai/text-embedding-3-small'."
        )
    return as_embedder(dspy.Embedder(spec), name=spec)
