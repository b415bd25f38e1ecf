"""The embedded LM: llama.cpp running in-process (xllamacpp), plugged into DSPy as an engine.

DSPy 3.4 takes a custom LM as ``dspy.LM("local/<name>", engine=LlamaEngine(...),
async_engine=AsyncLlamaEngine(...))``: the engine turns one canonical ``dspy.lm15.Request``
into one ``dspy.lm15.Response``; DSPy keeps caching, retries, ``n`` fan-out, history and
usage tracking. Why each piece is here:

- One server per process. Loading a GGUF takes seconds and hundreds of MB, so servers live in
  a module-level cache keyed by model path and settings: two ``make_lm("local")`` share one.
  The engine object itself holds only settings, so DSPy can copy, deepcopy and save it.
- One call at a time. On a small CPU llama.cpp decodes one sequence well; a lock serialises
  calls so concurrent DSPy threads queue instead of thrashing the cores.
- Prompt cache kept. Every request asks llama.cpp to keep the slot's KV cache
  (``cache_prompt``), and the server keeps recent prompts in RAM (``cache_ram_mib``), so a
  call sharing a long instruction prefix with the previous one only reads its new tail.
- Seeds per rollout. DSPy strips ``rollout_id`` before a request reaches any engine (it is a
  cache-key field; ``validate_request`` even forbids it in ``Config.extensions``), yet
  rollouts at ``temperature > 0`` must really differ. ``RolloutSeedCallback`` (installed by
  ``make_lm``) carries the call's rollout id to the engine in a context variable, and the
  engine derives a reproducible seed from (seed, rollout id, candidate number). Without it, a
  sampled call gets a fresh random seed. An unset temperature means greedy decoding.
- Structured output. ``response_format`` (as DSPy's JSONAdapter sends it) becomes llama.cpp's
  JSON-schema constrained decoding, so typed outputs parse; stray Markdown code fences around
  a reply are removed.
- No greedy loops. Small models decoding greedily sometimes repeat one sentence until
  ``max_tokens``, and each such call then costs the whole token budget. llama.cpp's DRY
  sampler, over a short window and reset at newlines, quotes and colons, penalises extending
  a span that already occurred; it is on by default (``DEFAULT_SAMPLING``; pass
  ``sampling={}`` to turn it off).
- Loud errors. A server error becomes an lm15 error carrying the server's own message
  (context overflow -> ContextLengthError, bad request -> InvalidRequestError), never an
  empty string.
- Short OpenMP spins. llama.cpp's CPU backend meets its threads at an OpenMP barrier after
  every operation, and GNU OpenMP spins there for ~300k iterations before sleeping. On a
  2-core machine where anything else wants a core (the environment simulator, the embedder, a
  test run), the spinning thread burns the time slice its partner needs, and generation slows
  many times over. ``GOMP_SPINCOUNT=1000`` spins briefly enough to hand the core over under
  that contention and long enough to keep an idle machine's speed (``OMP_WAIT_POLICY=PASSIVE``
  hands it over too, but sleeps at every barrier and so slows the idle case). libgomp reads
  the variable once, when it is loaded (by xllamacpp, torch or faiss, whichever comes first),
  so it is set when this module is imported, unless the user set GOMP_SPINCOUNT or
  OMP_WAIT_POLICY themselves.

Measured: docs/results/lm.md#embedded-lm-benchmarkslm_benchpy
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import re
import secrets
import threading
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dspy.clients.engines.base import validate_request
from dspy.lm15 import (
    ContextLengthError,
    InvalidRequestError,
    Message,
    ProviderError,
    Request,
    Response,
    ServerError,
    TextPart,
    ThinkingPart,
    TokenLogprob,
    TopLogprob,
    UnsupportedFeatureError,
    Usage,
    response_to_events,
)
from dspy.utils.callback import BaseCallback

from rbdspy.lm.model_files import ensure_model, model_file

__all__ = ["AsyncLlamaEngine", "LlamaEngine", "RolloutSeedCallback", "fit_threads", "loaded_servers", "unload_all"]

PROVIDER = "llama.cpp"
_INSTALL_HINT = "pip install torch==2.13.0 && pip install 'rbdspy[local]'"
logger = logging.getLogger(__name__)


def _libgomp_loaded() -> bool:
    try:
        with open("/proc/self/maps") as maps:
            return any("libgomp" in line for line in maps)
    except OSError:  # not Linux: cannot tell, assume not yet
        return False


def _prefer_short_openmp_spins() -> bool:
    """Cap OpenMP barrier spinning (see the module docstring). Returns whether the process's
    OpenMP will see it: False when libgomp was loaded before this module."""
    if "OMP_WAIT_POLICY" in os.environ or "GOMP_SPINCOUNT" in os.environ:
        return True  # the user's choice stands
    too_late = _libgomp_loaded()
    os.environ["GOMP_SPINCOUNT"] = "1000"
    return not too_late


_SHORT_SPINS = _prefer_short_openmp_spins()


# ─── rollout ids: from the DSPy call to the engine ──────────────────────────────────────────


@dataclass
class _Rollout:
    rollout_id: Any
    candidates: int = 0  # how many completions this LM call has asked for so far (n > 1, retries)


_ROLLOUT: ContextVar[_Rollout | None] = ContextVar("rbdspy_rollout", default=None)


class RolloutSeedCallback(BaseCallback):
    """Carries each LM call's ``rollout_id`` (per-call kwarg, else the LM's own) to the engine.

    A DSPy callback because that is the one hook that sees the call's arguments and runs in
    the same context as the engine call (sync, threaded and async alike)."""

    def __init__(self):
        self._tokens: dict[str, Any] = {}

    def on_lm_start(self, call_id, instance, inputs):
        kwargs = inputs.get("kwargs") or {}
        own = getattr(instance, "kwargs", None) or {}
        rollout_id = kwargs["rollout_id"] if "rollout_id" in kwargs else own.get("rollout_id")
        self._tokens[call_id] = _ROLLOUT.set(_Rollout(rollout_id))

    def on_lm_end(self, call_id, outputs, exception=None):
        token = self._tokens.pop(call_id, None)
        if token is not None:
            with contextlib.suppress(ValueError):  # ended in another context; that context dies with its call
                _ROLLOUT.reset(token)


def _derive_seed(*parts: Any) -> int:
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


# ─── the process-wide servers ───────────────────────────────────────────────────────────────


@dataclass
class _Loaded:
    server: Any
    lock: threading.Lock
    path: str


_SERVERS: dict[tuple, _Loaded] = {}
_SERVERS_LOCK = threading.Lock()


def loaded_servers() -> list[str]:
    """Model paths with a server loaded in this process (for diagnostics and tests)."""
    with _SERVERS_LOCK:
        return [loaded.path for loaded in _SERVERS.values()]


def unload_all() -> None:
    """Drop every cached server; the next call loads again. Frees the models' memory once
    no engine call is running."""
    with _SERVERS_LOCK:
        _SERVERS.clear()


def usable_cpus() -> int:
    """How many CPUs this process may run on (`taskset` narrows it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 2


MAX_THREADS = 8  # llama.cpp's decoding gains little from more threads on a CPU


def _bounded_threads(cpus: float) -> int:
    return max(1, min(int(cpus), MAX_THREADS))


def _default_threads() -> int:
    return _bounded_threads(usable_cpus())


def fit_threads(lm: Any, cpus: float | None) -> None:
    """Gives an embedded engine (`LlamaEngine`) that was left to choose its threads as many as
    `cpus` (at least 1, at most MAX_THREADS): what a Ray task does with the CPUs Ray gave it, the
    way Ray sets a task's OMP_NUM_THREADS. Left to itself the engine takes every core the process
    may run on, and tasks side by side would then put several compute threads on each core, whose
    barriers after every operation wait on each other's turns. An engine given `n_threads` keeps
    it; any other LM, or no `cpus`, leaves everything as it is. Call it before the model loads
    (the loaded server is kept per thread count)."""
    engine = getattr(lm, "engine", None)
    if cpus and isinstance(engine, LlamaEngine) and engine.n_threads is None:
        engine.n_threads = _bounded_threads(cpus)


def _start_server(path: str, settings: dict) -> Any:
    try:
        import xllamacpp  # optional: the local extra (xllamacpp)
    except ImportError as exc:
        raise ImportError(f"The embedded local LM needs xllamacpp, which is not installed: {_INSTALL_HINT}") from exc
    params = xllamacpp.CommonParams()
    params.model.path = path
    params.n_ctx = settings["n_ctx"]
    params.n_batch = settings["n_batch"]
    params.n_ubatch = settings["n_ubatch"]
    params.n_parallel = 1  # one slot: the lock serialises calls, and the slot keeps its KV cache
    params.cpuparams.n_threads = settings["n_threads"]
    params.cpuparams_batch.n_threads = settings["n_threads"]
    params.cache_prompt = True
    params.cache_ram_mib = settings["cache_ram_mib"]
    params.verbosity = 3 if os.environ.get("RBDSPY_LLAMA_VERBOSE") else -1
    if not _SHORT_SPINS:
        logger.warning(
            "OpenMP was loaded (e.g. by torch) before rbdspy could set GOMP_SPINCOUNT=1000, so llama.cpp's "
            "threads spin at every barrier and slow down sharply when another process wants a core. Import "
            "rbdspy first, or export GOMP_SPINCOUNT=1000 before starting Python."
        )
    return xllamacpp.Server(params)


# ─── request / response mapping ─────────────────────────────────────────────────────────────


_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*[ \t]*\n(.*?)\n?```\s*$", re.DOTALL)
_INNER_FENCE = re.compile(r"```(?:json|JSON)?[ \t]*\n(.*?)\n?```", re.DOTALL)


def strip_fences(text: str, json_mode: bool = False) -> str:
    """Remove a Markdown code fence wrapping the whole reply; in JSON mode also pull the JSON
    out of a fenced block that has chatter around it."""
    match = _FENCE.match(text)
    if match:
        return match.group(1).strip()
    if json_mode:
        inner = _INNER_FENCE.search(text)
        if inner:
            return inner.group(1).strip()
    return text


def _text_of(parts, where: str) -> str:
    texts = []
    for part in parts:
        if isinstance(part, TextPart):
            texts.append(part.text)
        elif isinstance(part, ThinkingPart):
            continue  # earlier reasoning is not replayed to a non-reasoning model
        else:
            raise UnsupportedFeatureError(
                f"the embedded local LM takes text only; {where} has a {type(part).__name__}",
                feature=getattr(part, "type", type(part).__name__),
                provider=PROVIDER,
            )
    return "\n".join(texts)


def _messages(request: Request) -> list[dict]:
    out = []
    if request.system is not None:
        system = request.system if isinstance(request.system, str) else _text_of(request.system, "the system prompt")
        out.append({"role": "system", "content": system})
    for i, message in enumerate(request.messages):
        if message.role == "tool":
            raise UnsupportedFeatureError(
                "the embedded local LM has no tool calling", feature="tools", provider=PROVIDER
            )
        role = "system" if message.role == "developer" else message.role
        out.append({"role": role, "content": _text_of(message.parts, f"message {i}")})
    return out


def _response_format(fmt: dict | None) -> dict | None:
    """lm15's canonical response_format -> the OpenAI shape llama.cpp's server takes."""
    if fmt is None:
        return None
    if fmt["type"] == "json_object":
        return {"type": "json_object"}
    inner = {"name": fmt.get("name", "response"), "schema": fmt["schema"]}
    if "strict" in fmt:
        inner["strict"] = fmt["strict"]
    return {"type": "json_schema", "json_schema": inner}


def _token_logprobs(logprobs: Any) -> tuple[TokenLogprob, ...]:
    """llama.cpp's OpenAI-shaped `choices[0].logprobs` as lm15 tokens; entries missing a token
    or a logprob are skipped."""
    entries = logprobs.get("content") if isinstance(logprobs, dict) else None

    def usable(entry: Any) -> bool:
        return isinstance(entry, dict) and "token" in entry and "logprob" in entry

    return tuple(
        TokenLogprob(
            token=str(entry["token"]),
            logprob=float(entry["logprob"]),
            top=tuple(
                TopLogprob(token=str(alt["token"]), logprob=float(alt["logprob"]))
                for alt in entry.get("top_logprobs") or []
                if usable(alt)
            ),
        )
        for entry in entries or []
        if usable(entry)
    )


def _raise_server_error(error: Any) -> None:
    if not isinstance(error, dict):
        raise ServerError(f"llama.cpp server error: {error}", provider=PROVIDER)
    message = str(error.get("message") or error)
    status = error.get("code") if isinstance(error.get("code"), int) else None
    kind = str(error.get("type") or "")
    if "context" in kind or "exceeds the available context" in message:
        raise ContextLengthError(message, provider=PROVIDER, status=status, provider_code=kind or None)
    if status is not None and 400 <= status < 500:
        raise InvalidRequestError(message, provider=PROVIDER, status=status, provider_code=kind or None)
    raise ServerError(message, provider=PROVIDER, status=status, provider_code=kind or None)


# ─── the engines ────────────────────────────────────────────────────────────────────────────

# DRY ("don't repeat yourself"): penalty 0.8 * 1.75 ** (n - 2) on the token that would extend a
# repeat of n >= 2 tokens within the last 256. Its default sequence breakers (newline, ':', '"',
# '*') keep JSON keys and line-by-line formats from counting as repeats.
DEFAULT_SAMPLING = {"dry_multiplier": 0.8, "dry_base": 1.75, "dry_allowed_length": 2, "dry_penalty_last_n": 256}

_SUPPORTED_PARAMS = frozenset(
    {
        "temperature",
        "max_tokens",
        "top_p",
        "top_k",
        "stop",
        "seed",
        "response_format",
        "frequency_penalty",
        "presence_penalty",
        "n",
        "rollout_id",
        "logprobs",
        "top_logprobs",
    }
)


class LlamaEngine:
    """DSPy engine over an in-process llama.cpp server (see the module docstring).

    Args:
        model: "local" (Qwen2.5-Coder-1.5B) or "local-fast" (0.5B), joined and verified by
            ``ensure_model`` on first use; ignored for loading when ``model_path`` is given.
        model_path: an explicit GGUF file instead of a packaged model.
        n_ctx: context window in tokens (prompt + reply).
        n_threads: CPU threads; default the CPUs this process may use, at most 8.
        max_tokens: reply cap when the request sets none.
        temperature: used when the request sets none; 0 is greedy, so the same prompt gives the
            same answer.
        sampling: llama.cpp sampling fields sent with every request unless the request sets
            them (in ``Config.extensions``); default ``DEFAULT_SAMPLING`` (DRY against
            repetition loops); ``{}`` sends none.
        server: a ready server object (anything with ``handle_chat_completions(dict)``); for
            tests. Never saved.
    """

    supports_response_schema = True
    supports_function_calling = False
    supports_reasoning = False
    supported_params = _SUPPORTED_PARAMS

    def __init__(
        self,
        model: str = "local",
        *,
        model_path: str | os.PathLike | None = None,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        n_batch: int = 2048,
        n_ubatch: int = 512,
        cache_ram_mib: int = 2048,
        max_tokens: int = 1024,
        temperature: float = 0.0,
        sampling: dict | None = None,  # None: DEFAULT_SAMPLING
        server: Any = None,
    ):
        self.model = model
        self.model_path = None if model_path is None else str(model_path)
        self.n_ctx = int(n_ctx)
        self.n_threads = None if n_threads is None else int(n_threads)
        self.n_batch = int(n_batch)
        self.n_ubatch = int(n_ubatch)
        self.cache_ram_mib = int(cache_ram_mib)
        self.max_tokens = int(max_tokens)
        self.temperature = float(temperature)
        self.sampling = dict(DEFAULT_SAMPLING if sampling is None else sampling)
        self._server = server
        self._own_lock = threading.Lock() if server is not None else None
        if self.model_path is None:
            model_file(model)  # unknown spec -> ValueError now, not at the first call

    # — loading —

    def _settings(self) -> dict:
        return {
            "n_ctx": self.n_ctx,
            "n_threads": self.n_threads or _default_threads(),
            "n_batch": self.n_batch,
            "n_ubatch": self.n_ubatch,
            "cache_ram_mib": self.cache_ram_mib,
        }

    def resolve_path(self) -> Path:
        """The GGUF file this engine runs (joining and verifying a packaged model if needed)."""
        if self.model_path is not None:
            path = Path(self.model_path).expanduser()
            if not path.is_file():
                raise FileNotFoundError(f"model_path {path} does not exist")
            return path
        return ensure_model(self.model)

    def load(self) -> _Loaded:
        """The process-wide server for this engine's model and settings, started on first use."""
        if self._server is not None:
            return _Loaded(self._server, self._own_lock, "<injected>")
        path = str(self.resolve_path())
        settings = self._settings()
        key = (path, *sorted(settings.items()))
        with _SERVERS_LOCK:
            loaded = _SERVERS.get(key)
            if loaded is None:
                loaded = _Loaded(_start_server(path, settings), threading.Lock(), path)
                _SERVERS[key] = loaded
            return loaded

    # — one completion —

    def build_body(self, request: Request) -> dict:
        """The llama.cpp chat-completions body for one canonical request."""
        config = request.config
        if request.tools or config.tool_choice is not None:
            raise UnsupportedFeatureError(
                "the embedded local LM has no tool calling", feature="tools", provider=PROVIDER
            )
        if config.reasoning is not None:
            raise UnsupportedFeatureError(
                "the embedded local model does not reason separately", feature="reasoning", provider=PROVIDER
            )
        if config.probabilities == "required":
            raise UnsupportedFeatureError(
                "probabilities are not measured by the embedded local LM", feature="probabilities", provider=PROVIDER
            )
        temperature = self.temperature if config.temperature is None else config.temperature
        body: dict[str, Any] = {
            "messages": _messages(request),
            "max_tokens": config.max_tokens or self.max_tokens,
            "temperature": temperature,
            "seed": self._seed(config.seed, temperature),
            "cache_prompt": True,
        }
        optional = {
            "top_p": config.top_p,
            "top_k": config.top_k,
            "frequency_penalty": config.frequency_penalty,
            "presence_penalty": config.presence_penalty,
        }
        body.update({key: val for key, val in optional.items() if val is not None})
        if config.stop:
            body["stop"] = list(config.stop)
        fmt = _response_format(config.response_format)
        if fmt is not None:
            body["response_format"] = fmt
        if config.logprobs is not None:  # the chosen tokens' logprobs, with this many alternatives each
            body["logprobs"] = True
            body["top_logprobs"] = int(config.logprobs)
        for key, val in {**self.sampling, **(config.extensions or {})}.items():  # llama.cpp's own knobs
            body.setdefault(key, val)
        return body

    def _seed(self, seed: int | None, temperature: float) -> int:
        """Greedy: the seed does not matter. Sampling: with a rollout id, a seed derived from
        (seed, rollout id, candidate number), so rollouts differ and each is reproducible; with
        only an explicit seed, that seed for the first candidate and derived ones for the rest
        (n > 1); with neither, a fresh random seed."""
        if temperature <= 0:
            return 0 if seed is None else seed
        call = _ROLLOUT.get()
        k = 0
        if call is not None:
            k, call.candidates = call.candidates, call.candidates + 1
            if call.rollout_id is not None:
                return _derive_seed(0 if seed is None else seed, call.rollout_id, k)
        if seed is None:
            return secrets.randbelow(2**31)
        return seed if k == 0 else _derive_seed(seed, "candidate", k)

    def complete(self, request: Request) -> Response:
        validate_request(request)
        body = self.build_body(request)
        loaded = self.load()
        with loaded.lock:
            try:
                raw = loaded.server.handle_chat_completions(body)
            except ValueError as exc:  # the server's validation of the request
                raise InvalidRequestError(str(exc), provider=PROVIDER, status=400) from exc
            except Exception as exc:  # anything else the binding raises: not retryable
                raise ProviderError(f"llama.cpp failed: {type(exc).__name__}: {exc}", provider=PROVIDER) from exc
        return self._response(request, raw, body)

    def _response(self, request: Request, raw: Any, body: dict) -> Response:
        json_mode = "response_format" in body
        if not isinstance(raw, dict):
            raise ServerError(f"llama.cpp returned {type(raw).__name__}, not a completion", provider=PROVIDER)
        if "error" in raw:
            _raise_server_error(raw["error"])
        try:
            choice = raw["choices"][0]
            text = choice["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise ServerError(f"llama.cpp returned no completion: {str(raw)[:500]}", provider=PROVIDER) from None
        if text is None:
            raise ServerError(f"llama.cpp returned a completion without text: {str(raw)[:500]}", provider=PROVIDER)
        text = strip_fences(text, json_mode=json_mode)
        usage = raw.get("usage") or {}
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
        finish = choice.get("finish_reason")
        provider_data = {"timings": raw["timings"]} if isinstance(raw.get("timings"), dict) else None
        logprobs = _token_logprobs(choice.get("logprobs")) if "logprobs" in body else None
        return Response(
            id=raw.get("id") or None,
            model=request.model,
            message=Message.assistant([TextPart(text)]),
            finish_reason=finish if finish in ("stop", "length") else "stop",
            usage=Usage(
                input_tokens=usage.get("prompt_tokens"),
                output_tokens=usage.get("completion_tokens"),
                total_tokens=usage.get("total_tokens"),
                cache_read_tokens=cached,
            ),
            provider_data=provider_data,
            logprobs=logprobs or None,
        )

    def stream(self, request: Request):
        """DSPy's streaming interface, served as one chunk: llama.cpp here is fast to finish
        and slow to stream through the lock."""
        return response_to_events(self.complete(request))

    def close(self) -> None:
        """Borrowed by DSPy; the shared server outlives any one LM (see ``unload_all``)."""

    # — saving —

    def dump_state(self) -> dict:
        return {
            "model": self.model,
            "model_path": self.model_path,
            "n_ctx": self.n_ctx,
            "n_threads": self.n_threads,
            "n_batch": self.n_batch,
            "n_ubatch": self.n_ubatch,
            "cache_ram_mib": self.cache_ram_mib,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "sampling": self.sampling,
        }

    @classmethod
    def load_state(cls, state: dict) -> LlamaEngine:
        return cls(**state)

    def __repr__(self) -> str:
        return f"LlamaEngine(model={self.model_path or self.model!r}, n_ctx={self.n_ctx})"


class AsyncLlamaEngine:
    """The async face of a LlamaEngine, for ``lm.acall`` / ``aforward``: runs the sync call in
    a worker thread (context copied, so the rollout id travels along) and shares its server."""

    def __init__(self, sync: LlamaEngine):
        self.sync = sync

    async def complete(self, request: Request) -> Response:
        return await asyncio.to_thread(self.sync.complete, request)

    async def stream(self, request: Request):
        response = await self.complete(request)
        for event in response_to_events(response):
            yield event

    async def aclose(self) -> None:
        pass

    def dump_state(self) -> dict:
        return self.sync.dump_state()

    @classmethod
    def load_state(cls, state: dict) -> AsyncLlamaEngine:
        return cls(LlamaEngine.load_state(state))
