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
import socket
import urllib.request
from typing import Any
from urllib.parse import urlparse

import dspy

from rbdspy.core.lm_errors import LMSetupError
from rbdspy.lm.embedder_local import MiniLMEmbedder, minilm_model_dir
from rbdspy.lm.local_engine import AsyncLlamaEngine, LlamaEngine, RolloutSeedCallback
from rbdspy.lm.model_files import model_file
from rbdspy.memory.embedders import HashEmbedder, as_embedder

__all__ = ["LOCAL_SPECS", "check_server", "make_embedder", "make_lm"]

LOCAL_SPECS = ("local", "local-fast")
_INSTALL_HINT = "pip install torch==2.13.0 && pip install 'rbdspy[local]'"
# Settings that belong to the embedded engine rather than to dspy.LM.
_ENGINE_KEYS = ("model_path", "n_ctx", "n_threads", "n_batch", "n_ubatch", "cache_ram_mib", "sampling")
_LOCAL_HOSTS = {"localhost", "127.0.0.1", "0.0.0.0", "::1", "host.docker.internal"}
# Other names LiteLLM reads a provider's key from, which its validate_environment does not know.
_KEY_ALIASES = {
    "HUGGINGFACE_API_KEY": ("HF_TOKEN",),
    "REPLICATE_API_KEY": ("REPLICATE_API_TOKEN",),
    "TOGETHERAI_API_KEY": ("TOGETHER_API_KEY", "TOGETHER_AI_API_KEY", "TOGETHER_AI_TOKEN"),
}
_OLLAMA_BASE = "http://localhost:11434"  # where Ollama listens unless OLLAMA_API_BASE says otherwise


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
    rather than at the first call; the model itself loads on the first call. Likewise a provider
    model whose API key is neither given (``api_key=``) nor in its environment variable is
    LMSetupError here, checked offline; ``check_server`` asks a server a user runs.
    """
    spec = _check_lm_spec((os.environ.get("RBDSPY_LM") or "local") if spec is None else spec)
    if spec not in LOCAL_SPECS:
        engine_only = sorted(key for key in _ENGINE_KEYS if key in kw)
        if engine_only:
            raise ValueError(f"{engine_only} configure the embedded model ('local' / 'local-fast'), not {spec!r}")
        if _is_local_endpoint(spec, kw):
            # No network for LiteLLM's remote price list when the model is local anyway.
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        lm = dspy.LM(spec, **kw)
        _check_key(lm)  # offline: a missing key is refused now, not at the first call of the first task
        return lm

    if importlib.util.find_spec("xllamacpp") is None:
        raise ImportError(f"the embedded model {spec!r} runs llama.cpp in-process and needs xllamacpp: {_INSTALL_HINT}")
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


def _missing_key_vars(lm: Any) -> list[str]:
    """The environment variables, one of which `lm` needs for its API key, when none is set and
    no key was given; [] when it has one, needs none, or that cannot be told offline.

    Asked of the client that will send the calls: DSPy's native (lm15) client, through its
    offline credential report, for the providers it serves; LiteLLM's `validate_environment` for
    the rest (only a missing `*_API_KEY` counts there: cloud credentials such as AWS's or
    Vertex's can come from elsewhere)."""
    if lm.kwargs.get("api_key"):
        return []
    try:  # private to DSPy 3.4: any other version leaves the question to LiteLLM
        from dspy._vendor.lm15.doctor import explain_auth
        from dspy.clients.backend_selection import select_backend

        selection = select_backend(lm)
        native = selection.native and selection.resolution is not None
    except Exception:
        native = False
    if native:
        if selection.clients.get("api_key"):
            return []
        try:
            report = explain_auth(selection.resolution)
        except Exception:  # a provider the report does not know: left to the first call
            return []
        return [] if report.configured else [s.kind.split(":", 1)[1] for s in report.steps if s.kind.startswith("env:")]
    try:
        import litellm  # heavy: LiteLLM (dspy loads it at the first LM call anyway)

        if litellm.api_key:
            return []
        missing = litellm.validate_environment(model=lm.model, api_base=lm.kwargs.get("api_base"))["missing_keys"]
    except Exception:
        return []
    if not missing or not all(str(key).endswith("_API_KEY") for key in missing):
        return []
    names = [name for key in missing for name in (key, *_KEY_ALIASES.get(key, ()))]
    return [] if any(os.environ.get(name) for name in names) else names


def _check_key(lm: Any) -> None:
    names = _missing_key_vars(lm)
    if names:
        local = _is_local_endpoint(lm.model, lm.kwargs)
        raise LMSetupError(
            f"no API key for {lm.model!r}: set {' or '.join(names)} in the environment"
            + (" (a local server takes any value)" if local else "")
            + ", or use --lm local (the embedded model, offline)"
        )


def _server_address(lm: Any) -> tuple[str, str, int, str] | None:
    """(URL, host, port, where the URL is set) of the server `lm` is sent to when it is one that
    a user runs (an api_base / base_url, a <PROVIDER>_API_BASE variable, Ollama's default); None
    for a provider's own public endpoint and for the embedded model."""
    model, kwargs = getattr(lm, "model", None), getattr(lm, "kwargs", None)
    if not isinstance(model, str) or not isinstance(kwargs, dict) or "/" not in model:
        return None
    provider = model.split("/", 1)[0]
    variable = "OLLAMA_API_BASE" if provider in ("ollama", "ollama_chat") else f"{provider.upper()}_API_BASE"
    base, where = kwargs.get("api_base") or kwargs.get("base_url"), "api_base"
    if not base:
        base, where = os.environ.get(variable), variable
    if not base and provider in ("ollama", "ollama_chat"):
        base = _OLLAMA_BASE
    if not base:
        return None
    url = urlparse(str(base) if "://" in str(base) else f"http://{base}")
    try:
        port = url.port or (443 if url.scheme == "https" else 80)
    except ValueError:  # a port that is not a number: left to the client's own message
        return None
    return (str(base), url.hostname, port, where) if url.hostname else None


def check_server(lm: Any, timeout: float = 3.0) -> None:
    """LMSetupError, in one line, when nothing accepts connections at the server `lm` is sent to
    (an Ollama or an OpenAI-compatible server a user runs): one TCP connection, `timeout`
    seconds at most, no request. A provider's public endpoint, a server behind a proxy and the
    embedded model are not checked (nothing to ask offline)."""
    address = _server_address(lm)
    if address is None:
        return
    base, host, port, where = address
    scheme = urlparse(base).scheme or "http"
    if urllib.request.getproxies().get(scheme) and not urllib.request.proxy_bypass(host):
        return  # the client will go through the proxy: a direct connection proves nothing
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as error:
        why = getattr(error, "strerror", None) or str(error) or type(error).__name__
        ollama = lm.model.split("/", 1)[0] in ("ollama", "ollama_chat")
        start = "start it (`ollama serve`)" if ollama else "start it"
        raise LMSetupError(
            f"no LM server answers at {base} for {lm.model!r} ({why}): {start}, point {where} at where it "
            "runs, or use --lm local (the embedded model, offline)"
        ) from error


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
            raise ImportError(f"the local embedder (MiniLM-L6) needs sentence-transformers: {_INSTALL_HINT}")
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
