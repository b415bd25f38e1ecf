"""A run's settings are one object, resolved once: what the runner, each arm's job and player read,
and what config.json records. The record keeps the keys and values it always had, so the runs
committed under docs/bench/ still report and resume."""

import json
import pickle
import shlex
from dataclasses import fields
from pathlib import Path

import pytest
from typer.testing import CliRunner

import rbdspy.bench
import rbdspy.lm
from rbdspy.agent.compiled_agent import card, shipped
from rbdspy.bench import BenchOptions
from rbdspy.bench.agent_variants import AGENT_VARIANTS, USER_AGENTS
from rbdspy.bench.arm_job import ArmJob
from rbdspy.bench.player import ArmPlayer
from rbdspy.bench.report import reproduce_command
from rbdspy.bench.settings import (
    DEFAULT_MAX_STEPS,
    DEFAULT_TASKS,
    RESUME_KEYS,
    SESSION_FIELDS,
    resolve,
    resume_mismatches,
    run_record,
    saved_record,
)
from rbdspy.cli import app

ROOT = Path(__file__).resolve().parents[2]
HANDLE_RUN = ROOT / "docs" / "bench" / "house-starts-handle-local" / "config.json"


def _committed_runs() -> list[Path]:
    """The bench runs committed under docs/bench (config.json with a "config"; the judge runs hold none)."""
    return sorted(p for p in (ROOT / "docs" / "bench").glob("*/config.json") if "config" in json.loads(p.read_text()))


def test_a_committed_run_resumes_with_the_settings_it_was_played_with():
    saved = json.loads(HANDLE_RUN.read_text(encoding="utf-8"))["config"]
    settings = resolve(
        BenchOptions(
            task_set="house-starts",
            n_tasks=60,
            max_steps=15,
            build_fraction=0.3334,
            world_seed=5,
            agent="routes-handle",
            arms=saved["arms"],
            lm_name="local",
            embedder_name="local",
        )
    )
    assert resume_mismatches(saved, settings) == []
    assert run_record(settings) == saved  # the same keys, in the same order, with the same values
    assert list(run_record(settings)) == list(saved)
    changed = resume_mismatches(saved, settings.replace(agent="auto", world_seed=6))
    assert changed == ["world_seed: run has 5, asked 6", "agent: run has 'routes-handle', asked 'auto'"]
    # Another model does not resume the run; a run that named none (the Python API) cannot tell.
    assert resume_mismatches(saved, settings.replace(lm_name="openai/gpt-4o-mini")) == [
        "lm: run has 'local', asked 'openai/gpt-4o-mini'"
    ]
    assert resume_mismatches({**saved, "lm": "", "embedder": ""}, settings) == []


@pytest.fixture
def handed(monkeypatch):
    """The BenchOptions `rbdspy bench` hands to run_bench (nothing is played)."""
    seen = {}
    monkeypatch.setattr(rbdspy.bench, "run_bench", lambda lm, embedder, out, options, **_: seen.update(options=options))
    monkeypatch.setattr(rbdspy.lm, "make_lm", lambda spec: f"lm:{spec}")
    monkeypatch.setattr(rbdspy.lm, "make_embedder", lambda spec: f"emb:{spec}")
    return seen


@pytest.mark.parametrize("path", _committed_runs(), ids=lambda p: p.parent.name)
def test_every_committed_run_is_resumed_by_its_own_command(path, handed):
    """The command results.json prints for a committed run, given --resume, plays settings that
    match the run's (a run left at a variant since retired cannot be resumed, and is skipped; one
    whose compiled agent is no longer shipped is refused with the reason)."""
    saved = json.loads(path.read_text(encoding="utf-8"))["config"]
    if saved.get("agent", "auto") not in (*AGENT_VARIANTS, *USER_AGENTS):
        pytest.skip(f"agent variant {saved['agent']!r} no longer exists")
    argv = shlex.split(reproduce_command(saved_record(saved)))[1:]
    result = CliRunner().invoke(app, [*argv, "--out", str(path.parent), "--resume"])
    assert result.exit_code == 0, result.output
    if "compiled-agent" in saved["arms"] and saved["env"] not in {card(n).get("env") for n in shipped()}:
        # its compiled program left the package once measured: resuming says so, before any task
        with pytest.raises(ValueError, match=f"ships no compiled agent for {saved['env']}"):
            resolve(handed["options"])
        return
    settings = resolve(handed["options"])
    assert settings.resume and resume_mismatches(saved, settings) == []
    assert saved_record(run_record(settings)) == run_record(settings)


def test_settings_are_resolved_once_and_resolving_them_again_changes_nothing():
    settings = resolve(BenchOptions(arms="default", seed_from=[Path("a.jsonl")]))
    assert (settings.env, settings.n_tasks, settings.max_steps) == ("twx", DEFAULT_TASKS, DEFAULT_MAX_STEPS)
    assert settings.arms == ["no-memory", "reasoningbank", "reasoningbank-oracle"] and settings.seed_from == ["a.jsonl"]
    assert resolve(settings) == settings
    with pytest.raises(ValueError, match="--world-seed picks a persistent world"):
        resolve(BenchOptions(world_seed=2))
    with pytest.raises(ValueError, match="unknown agent variant 'smart'"):
        resolve(BenchOptions(agent="smart"))
    # The compiled agent: a user agent's only, and only where rbdspy ships one for the environment.
    with pytest.raises(ValueError, match="compiled-agent arm plays a user agent"):
        resolve(BenchOptions(arms="no-memory,compiled-agent"))
    with pytest.raises(ValueError, match="ships no compiled agent for twx"):
        resolve(BenchOptions(arms="no-memory,compiled-agent", agent="react"))
    with pytest.raises(ValueError, match="ships no compiled agent for twx"):
        resolve(BenchOptions(agent="react-compiled"))
    with pytest.raises(ValueError, match=r"ships no compiled agent for miniwob; shipped: none"):
        resolve(BenchOptions(env="web", task_set="web", agent="react-starter", arms="compiled-agent"))
    with pytest.raises(ValueError, match=r"ships no compiled agent for textworld; shipped: none"):
        resolve(BenchOptions(env="textworld", task_set="house-starts", agent="react", arms="compiled-agent"))
    # a run whose compiled-agent arm is paused resumes without it: the paused arm is not built
    paused = BenchOptions(
        env="textworld",
        task_set="house-starts",
        agent="react-act-map",
        arms="no-memory,compiled-agent",
        pause_arms="compiled-agent",
        resume=True,
    )
    assert resolve(paused).arms == ["no-memory", "compiled-agent"]
    assert resolve(paused.replace(pause_arms=["compiled-agent"])).arms == ["no-memory", "compiled-agent"]


def test_the_record_holds_what_describes_the_run_and_no_password():
    settings = resolve(BenchOptions(bank_url="postgresql://me:secret@db/bench", resume=True, workers=3))
    record = run_record(settings)
    assert record["bank_url"] == "postgresql://me@db/bench" and settings.bank_url.endswith("secret@db/bench")
    assert not set(SESSION_FIELDS) & set(record) and set(RESUME_KEYS) <= set(record)
    assert (record["lm"], record["embedder"]) == ("", "")  # lm_name and embedder_name, as config.json names them
    old = {k: v for k, v in record.items() if k not in ("agent", "calibrate_on_build", "world_seed")}
    assert saved_record(old) == record  # a run written before a setting existed had its default


def test_one_settings_object_travels_to_each_arm_and_no_class_restates_its_fields(tmp_path):
    settings = resolve(BenchOptions(max_steps=3, agent="loop"))
    job = ArmJob("no-memory", settings, [], tmp_path)
    assert pickle.loads(pickle.dumps(job)) == job  # what a Ray worker is sent
    option_names = {f.name for f in fields(BenchOptions)}
    assert not {f.name for f in fields(ArmJob)} & option_names
    player = ArmPlayer(job, environment=None, embedder=None)
    assert player.settings is settings and player.agent_options["policies"] == AGENT_VARIANTS["loop"]
