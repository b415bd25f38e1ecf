"""LlamaEngine's mapping between DSPy and llama.cpp, checked against a fake server: what the
request body carries (messages, response_format, temperature, seeds per rollout id), what comes
back (fence-free text, usage DSPy can track), and that server errors raise."""

import asyncio
import json
import logging
import sys
import threading
import time
from typing import Literal

import dspy
import pytest
from dspy.lm15 import Config, ContextLengthError, InvalidRequestError, Message, Request, UnsupportedFeatureError
from dspy.utils.exceptions import ContextWindowExceededError, LMError

from rbdspy.lm import local_engine
from rbdspy.lm.local_engine import AsyncLlamaEngine, LlamaEngine, RolloutSeedCallback, fit_threads, strip_fences

MODEL = "local/fake"


class FakeServer:
    """Records every body; replies with `reply` (a str, a dict, or a callable body -> dict)."""

    def __init__(self, reply="hello"):
        self.reply = reply
        self.bodies = []

    def handle_chat_completions(self, body):
        self.bodies.append(json.loads(json.dumps(body)))  # the server gets plain JSON
        reply = self.reply(body) if callable(self.reply) else self.reply
        if isinstance(reply, dict):
            return reply
        return {
            "id": "chatcmpl-1",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": reply}}],
            "usage": {
                "prompt_tokens": 50,
                "completion_tokens": 7,
                "total_tokens": 57,
                "prompt_tokens_details": {"cached_tokens": 40},
            },
            "timings": {"prompt_n": 10, "prompt_ms": 100.0, "predicted_n": 7, "predicted_ms": 70.0, "cache_n": 40},
        }


def make(reply="hello", *, callbacks=True, **lm_kwargs):
    server = FakeServer(reply)
    engine = LlamaEngine("local-fast", server=server)
    lm = dspy.LM(
        MODEL,
        engine=engine,
        async_engine=AsyncLlamaEngine(engine),
        callbacks=[RolloutSeedCallback()] if callbacks else None,
        **lm_kwargs,
    )
    return lm, server


class Classify(dspy.Signature):
    """Classify the text and count its words."""

    text: str = dspy.InputField()
    label: Literal["good", "bad"] = dspy.OutputField()
    words: int = dspy.OutputField()


def request(text="hi", **config):
    return Request(model=MODEL, messages=(Message.user(text),), system="be brief", config=Config(**config))


# — request mapping —


def test_body_defaults_are_greedy_with_prompt_cache():
    engine = LlamaEngine("local-fast", server=FakeServer())
    body = engine.build_body(request("hi"))
    assert body["messages"] == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    assert body["temperature"] == 0.0 and body["seed"] == 0
    assert body["max_tokens"] == engine.max_tokens
    assert body["cache_prompt"] is True
    assert "response_format" not in body
    assert body["dry_multiplier"] > 0  # repetition-loop guard on by default
    assert "dry_multiplier" not in LlamaEngine("local-fast", sampling={}, server=FakeServer()).build_body(request())


def test_body_carries_sampling_settings():
    engine = LlamaEngine("local-fast", server=FakeServer())
    body = engine.build_body(request("hi", temperature=0.7, max_tokens=33, top_p=0.9, stop=("END",), seed=5))
    assert body["temperature"] == 0.7 and body["max_tokens"] == 33 and body["top_p"] == 0.9
    assert body["stop"] == ["END"] and body["seed"] == 5


def test_engine_sampling_defaults_and_request_extensions():
    engine = LlamaEngine("local-fast", sampling={"dry_multiplier": 0.8, "min_p": 0.05}, server=FakeServer())
    body = engine.build_body(request(extensions={"min_p": 0.1}))
    assert body["dry_multiplier"] == 0.8 and body["min_p"] == 0.1
    assert LlamaEngine.load_state(engine.dump_state()).sampling == {"dry_multiplier": 0.8, "min_p": 0.05}


def test_response_format_json_schema_and_json_object():
    engine = LlamaEngine("local-fast", server=FakeServer())
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    body = engine.build_body(
        request(response_format={"type": "json_schema", "name": "Out", "schema": schema, "strict": True})
    )
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "Out", "schema": schema, "strict": True},
    }
    body = engine.build_body(request(response_format={"type": "json_object"}))
    assert body["response_format"] == {"type": "json_object"}


def test_json_adapter_sends_the_signature_schema_and_parses():
    lm, server = make('{"label": "good", "words": 3}')
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        pred = dspy.Predict(Classify)(text="nice and sunny")
    assert (pred.label, pred.words) == ("good", 3)
    fmt = server.bodies[-1]["response_format"]
    assert fmt["type"] == "json_schema"
    props = fmt["json_schema"]["schema"]["properties"]
    assert props["label"]["enum"] == ["good", "bad"] and props["words"]["type"] == "integer"


def test_chat_adapter_round_trip():
    lm, server = make("[[ ## label ## ]]\nbad\n\n[[ ## words ## ]]\n2\n\n[[ ## completed ## ]]")
    with dspy.context(lm=lm, adapter=dspy.ChatAdapter()):
        pred = dspy.Predict(Classify)(text="awful rain")
    assert (pred.label, pred.words) == ("bad", 2)
    assert "response_format" not in server.bodies[-1]
    assert server.bodies[-1]["messages"][0]["role"] == "system"


def test_tools_are_refused():
    from dspy.lm15 import FunctionTool

    engine = LlamaEngine("local-fast", server=FakeServer())
    tool = FunctionTool(name="f", description="d", parameters={"type": "object", "properties": {}})
    with pytest.raises(UnsupportedFeatureError):
        engine.complete(Request(model=MODEL, messages=(Message.user("x"),), tools=(tool,)))


def test_unknown_model_spec_fails_at_construction():
    with pytest.raises(ValueError, match="unknown local model"):
        LlamaEngine("local-huge")


# — seeds and rollout ids —


def test_rollout_ids_get_distinct_reproducible_seeds():
    lm, server = make(temperature=1.0)
    for rollout_id in (1, 2, 1):
        lm("hi", rollout_id=rollout_id)
    a, b, a_again = (body["seed"] for body in server.bodies)
    assert a != b and a == a_again
    assert all(body["temperature"] == 1.0 for body in server.bodies)


def test_rollout_id_set_on_the_lm_copy():
    lm, server = make(temperature=0.8)
    lm.copy(rollout_id=7)("hi")
    lm.copy(rollout_id=8)("hi")
    assert server.bodies[0]["seed"] != server.bodies[1]["seed"]


def test_n_candidates_get_distinct_seeds():
    lm, server = make(temperature=1.0)
    outputs = lm("hi", n=3, rollout_id=4)
    assert len(outputs) == 3
    assert len({body["seed"] for body in server.bodies}) == 3


def test_explicit_seed_is_kept_and_n_candidates_still_differ():
    lm, server = make(temperature=1.0, seed=11)
    lm("hi")
    lm("hi", n=2)
    assert [body["seed"] for body in server.bodies][:2] == [11, 11]
    assert server.bodies[1]["seed"] != server.bodies[2]["seed"]


def test_stream_yields_one_complete_reply():
    engine = LlamaEngine("local-fast", server=FakeServer("streamed"))
    events = list(engine.stream(request()))
    assert events[0].type == "start" and events[-1].type == "end"
    assert "".join(e.delta.text for e in events if e.type == "delta") == "streamed"


def test_sampling_without_rollout_or_callback_still_varies():
    lm, server = make(temperature=1.0, callbacks=False)
    for _ in range(3):
        lm("hi")
    assert len({body["seed"] for body in server.bodies}) == 3


def test_greedy_ignores_rollout_id():
    lm, server = make(temperature=0.0)
    with pytest.warns(UserWarning, match="rollout_id has no effect"):
        lm("hi", rollout_id=1)
    lm("hi", rollout_id=2)
    assert [body["seed"] for body in server.bodies] == [0, 0]


def test_async_call_carries_the_rollout_id():
    lm, server = make(temperature=1.0)
    lm("hi", rollout_id=3)
    asyncio.run(lm.acall("hi", rollout_id=3))
    assert server.bodies[0]["seed"] == server.bodies[1]["seed"]


# — replies —


@pytest.mark.parametrize(
    "text, json_mode, expected",
    [
        ('```json\n{"a": 1}\n```', False, '{"a": 1}'),
        ('```\n{"a": 1}\n```\n', False, '{"a": 1}'),
        ('Here it is:\n```json\n{"a": 1}\n```', True, '{"a": 1}'),
        ('Here it is:\n```json\n{"a": 1}\n```', False, 'Here it is:\n```json\n{"a": 1}\n```'),
        ("[[ ## label ## ]]\ngood", False, "[[ ## label ## ]]\ngood"),
    ],
)
def test_strip_fences(text, json_mode, expected):
    assert strip_fences(text, json_mode=json_mode) == expected


def test_fenced_json_reply_parses():
    lm, _ = make('```json\n{"label": "bad", "words": 1}\n```')
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        pred = dspy.Predict(Classify)(text="meh")
    assert (pred.label, pred.words) == ("bad", 1)


def test_usage_reaches_dspy_tracking():
    lm, _ = make('{"label": "good", "words": 2}')
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter(), track_usage=True):
        pred = dspy.Predict(Classify)(text="fine day")
    usage = pred.get_lm_usage()[MODEL]
    assert usage["prompt_tokens"] == 50 and usage["completion_tokens"] == 7 and usage["total_tokens"] == 57
    assert usage["prompt_tokens_details"]["cached_tokens"] == 40


def test_response_keeps_llama_timings():
    engine = LlamaEngine("local-fast", server=FakeServer("ok"))
    response = engine.complete(request())
    assert response.text == "ok" and response.finish_reason == "stop"
    assert response.provider_data["timings"]["predicted_n"] == 7


# — errors —


def test_context_overflow_raises_with_the_server_message():
    error = {
        "error": {
            "code": 400,
            "type": "exceed_context_size_error",
            "message": "request (9030 tokens) exceeds the available context size (8192 tokens)",
        }
    }
    engine = LlamaEngine("local-fast", server=FakeServer(error))
    with pytest.raises(ContextLengthError, match="9030 tokens"):
        engine.complete(request())
    lm, _ = make(error)
    with pytest.raises(ContextWindowExceededError, match="9030 tokens"):
        lm("hi")


def test_bad_request_error_dict():
    lm, _ = make({"error": {"code": 400, "type": "invalid_request_error", "message": "Field 'n' is bad"}})
    with pytest.raises(LMError, match="Field 'n' is bad"):
        lm("hi")


def test_server_raising_valueerror_becomes_invalid_request():
    def boom(body):
        raise ValueError("JSON schema error at #: unrecognized type foo")

    engine = LlamaEngine("local-fast", server=FakeServer(boom))
    with pytest.raises(InvalidRequestError, match="unrecognized type foo"):
        engine.complete(request())


def test_server_500_raises_not_empty_text():
    lm, _ = make({"error": {"code": 500, "type": "server_error", "message": "slot crashed"}}, num_retries=0)
    with pytest.raises(LMError, match="slot crashed"):
        lm("hi")


def test_missing_content_raises():
    reply = {"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": None}}]}
    engine = LlamaEngine("local-fast", server=FakeServer(reply))
    with pytest.raises(Exception, match="without text"):
        engine.complete(request())


# — concurrency, sharing, saving —


def test_calls_are_serialised():
    active, peak = [0], [0]
    guard = threading.Lock()

    def slow(body):
        with guard:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.02)
        with guard:
            active[0] -= 1
        return "ok"

    lm, server = make(slow)
    threads = [threading.Thread(target=lambda: lm("hi")) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(server.bodies) == 4 and peak[0] == 1


def test_engines_with_same_settings_share_one_server(monkeypatch, tmp_path):
    started = []
    monkeypatch.setattr(local_engine, "_start_server", lambda path, settings: started.append(path) or FakeServer())
    monkeypatch.setattr(LlamaEngine, "resolve_path", lambda self: tmp_path / "m.gguf")
    local_engine.unload_all()
    try:
        a, b = LlamaEngine("local-fast"), LlamaEngine("local-fast")
        a.complete(request())
        b.complete(request())
        assert len(started) == 1
        LlamaEngine("local-fast", n_ctx=4096).complete(request())
        assert len(started) == 2
    finally:
        local_engine.unload_all()


def test_state_round_trip_through_a_saved_program(tmp_path):
    engine = LlamaEngine("local-fast", n_ctx=4096, n_threads=2, max_tokens=300)
    lm = dspy.LM("local/qwen", engine=engine, async_engine=AsyncLlamaEngine(engine), temperature=0.0)
    program = dspy.Predict(Classify)
    program.lm = lm
    path = tmp_path / "program.json"
    program.save(path)
    assert "rbdspy.lm.local_engine:LlamaEngine" in path.read_text()

    loaded = dspy.Predict(Classify)
    loaded.load(path, allow_unsafe_lm_state=True)
    restored = loaded.lm.engine
    assert isinstance(restored, LlamaEngine)
    assert restored.dump_state() == engine.dump_state()
    assert isinstance(loaded.lm._async_engine_spec, AsyncLlamaEngine)


def test_engine_survives_deepcopy():
    import copy

    engine = LlamaEngine("local-fast")
    assert copy.deepcopy(engine).dump_state() == engine.dump_state()


# — OpenMP wait policy —


def test_openmp_spins_are_capped(monkeypatch):
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    monkeypatch.setattr(local_engine, "_libgomp_loaded", lambda: False)
    assert local_engine._prefer_short_openmp_spins() is True
    import os

    assert os.environ["GOMP_SPINCOUNT"] == "1000"


class FakeXllamacpp:
    """Stands in for the xllamacpp module: records the params a server was started with, and
    loads no model."""

    def __init__(self):
        self.started = []

    def CommonParams(self):  # noqa: N802 (xllamacpp's name)
        from types import SimpleNamespace as NS

        return NS(model=NS(), cpuparams=NS(), cpuparams_batch=NS())

    def Server(self, params):  # noqa: N802
        self.started.append(params)
        return FakeServer()


def test_openmp_policy_too_late_is_reported(monkeypatch, tmp_path, caplog):
    """OpenMP loaded before rbdspy (e.g. by torch) cannot take the short spins: starting the
    embedded server then logs a warning that says so and how to fix it; with the spins in force
    it logs nothing."""
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    monkeypatch.setattr(local_engine, "_libgomp_loaded", lambda: True)
    fake = FakeXllamacpp()
    monkeypatch.setitem(sys.modules, "xllamacpp", fake)
    monkeypatch.setattr(local_engine, "_SERVERS", {})
    model = tmp_path / "fake.gguf"
    model.write_bytes(b"")

    def start(n_threads):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger=local_engine.__name__):
            LlamaEngine(model_path=model, n_threads=n_threads).load()
        return [r for r in caplog.records if r.name == local_engine.__name__ and r.levelno == logging.WARNING]

    monkeypatch.setattr(local_engine, "_SHORT_SPINS", local_engine._prefer_short_openmp_spins())
    assert local_engine._SHORT_SPINS is False
    [warning] = start(n_threads=1)
    message = warning.getMessage()
    assert "OpenMP was loaded" in message and "GOMP_SPINCOUNT=1000" in message and "Import rbdspy first" in message
    monkeypatch.setattr(local_engine, "_SHORT_SPINS", True)
    assert start(n_threads=2) == []  # another setting: a second server, started without the warning
    assert [p.model.path for p in fake.started] == [str(model)] * 2


def test_users_openmp_choice_stands(monkeypatch):
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    assert local_engine._prefer_short_openmp_spins() is True
    import os

    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE" and "GOMP_SPINCOUNT" not in os.environ


# — logprobs —


def with_logprobs(text, tokens):
    """A completion whose chosen tokens are `tokens`: (token, logprob, [(alternative, logprob)])."""
    entries = [
        {"token": t, "logprob": lp, "top_logprobs": [{"token": a, "logprob": alp} for a, alp in alts]}
        for t, lp, alts in tokens
    ]
    return {
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": text},
                "logprobs": {"content": entries},
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
    }


def test_logprobs_are_asked_for_and_reach_the_prediction():
    reply = with_logprobs('{"label": "good", "words": 1}', [('{"', 0.0, []), ("good", -0.2, [("bad", -1.8)])])
    lm, server = make(reply)
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        pred = dspy.Predict(Classify)(text="fine", config={"logprobs": True, "top_logprobs": 5})
    body = server.bodies[-1]
    assert body["logprobs"] is True and body["top_logprobs"] == 5
    second = pred.logprobs["content"][1]
    assert (second["token"], second["logprob"]) == ("good", -0.2)
    assert [(a["token"], a["logprob"]) for a in second["top_logprobs"]] == [("bad", -1.8)]


def test_no_logprobs_unless_asked():
    lm, server = make('{"label": "good", "words": 1}')
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        pred = dspy.Predict(Classify)(text="fine")
    assert "logprobs" not in server.bodies[-1] and getattr(pred, "logprobs", None) is None


@pytest.mark.parametrize(("cpus", "expected"), [(16, 8), (3.0, 3), (0.5, 1), (None, None), (0, None)])
def test_fit_threads_gives_an_unset_engine_the_cpus_within_bounds(cpus, expected):
    lm, _ = make()
    fit_threads(lm, cpus)
    assert lm.engine.n_threads == expected
    given = LlamaEngine("local-fast", n_threads=2, server=FakeServer())
    fit_threads(dspy.LM(MODEL, engine=given, async_engine=AsyncLlamaEngine(given)), cpus)
    assert given.n_threads == 2  # threads a user chose are kept
