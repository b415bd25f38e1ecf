"""An interrupted run resumes without redoing finished tasks, from the bank its finished tasks
left; a finished directory is never silently overwritten or mixed with other settings."""

import io
import json

import dspy
import pytest
from bench_testing import CallCounter, judge_calls, quiet_bench
from rich.console import Console

from rbdspy.bench import report_run
from rbdspy.bench.records import arm_path, read_records
from rbdspy.memory import MemoryStore

ARMS = "no-memory,reasoningbank"
N, STEPS = 4, 2


def _run(env, out, embedder, arms=ARMS, **options):
    return quiet_bench(env, out, embedder, arms, n_tasks=N, max_steps=STEPS, **options)


def _cut(path, keep, torn=False):
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:keep]) + ('{"index": 9, "tor' if torn else ""))


def test_resume_skips_finished_tasks_and_restores_the_bank(demo_env, tmp_path, hash_embedder):
    out = tmp_path / "run"
    first = _run(demo_env, out, hash_embedder)
    # interrupted: reasoningbank finished 2 of 4 tasks (its bank holds the items of all 4, as if
    # the crash came after the writes), no-memory 3, with a half-written line
    _cut(arm_path(out, "reasoningbank"), 2)
    _cut(arm_path(out, "no-memory"), 3, torn=True)
    counter = CallCounter()
    dspy.configure(callbacks=[counter.as_callback()])
    resumed = _run(demo_env, out, hash_embedder, resume=True)

    assert counter.agent_calls == (2 + 1) * STEPS  # only the 3 missing tasks were played
    # the judge's questions and the extractor, for reasoningbank's 2 missing tasks
    assert counter.calls == counter.agent_calls + 2 * (judge_calls(STEPS) + 1)
    assert counter.cache_settings == {False}  # every arm pays for its own calls: no DSPy cache hits
    for arm in ("no-memory", "reasoningbank"):
        assert [r["index"] for r in read_records(arm_path(out, arm))] == list(range(N))
    rows = read_records(arm_path(out, "reasoningbank"))
    assert [r["bank_size"] for r in rows] == [1, 2, 3, 4]  # the interrupted writes were rolled back first
    assert rows[2]["memories_used"] == 1
    with MemoryStore(out / "banks" / "reasoningbank", embedder=hash_embedder) as store:
        assert len(store) == N
    assert resumed["arms"]["reasoningbank"]["n_tasks"] == first["arms"]["reasoningbank"]["n_tasks"] == N

    again = CallCounter()
    dspy.configure(callbacks=[again.as_callback()])
    _run(demo_env, out, hash_embedder, resume=True)
    assert again.calls == 0  # nothing left to do


def test_a_bank_is_whole_in_its_file_after_each_task_and_one_behind_its_records_is_refused(
    demo_env, tmp_path, hash_embedder, monkeypatch
):
    out = tmp_path / "run"
    folded = []
    checkpoint = MemoryStore.checkpoint
    monkeypatch.setattr(MemoryStore, "checkpoint", lambda store: folded.append(len(store)) or checkpoint(store))
    _run(demo_env, out, hash_embedder)
    # memory.db alone holds the bank after each record (see the store's checkpoint test): a copy or
    # a commit made while the run goes on, or after it was killed, resumes from the right bank.
    assert folded == [r["bank_size"] for r in read_records(arm_path(out, "reasoningbank"))] == [1, 2, 3, 4]
    _cut(arm_path(out, "reasoningbank"), 2)

    # A bank that lost items its records say it held is not played on.
    with MemoryStore(out / "banks" / "reasoningbank", embedder=hash_embedder) as store:
        store.remove([item.id for item in store.list()[:3]])
    with pytest.raises(ValueError, match=r"arm 'reasoningbank': its records say its bank held 2 items .* holds 1"):
        _run(demo_env, out, hash_embedder, resume=True)


def test_resume_can_add_an_arm_to_a_finished_run(demo_env, tmp_path, hash_embedder):
    out = tmp_path / "run"
    _run(demo_env, out, hash_embedder)
    results = _run(demo_env, out, hash_embedder, arms="reasoningbank-oracle", resume=True)
    assert list(results["arms"]) == ["no-memory", "reasoningbank", "reasoningbank-oracle"]
    assert json.loads((out / "config.json").read_text())["config"]["arms"] == list(results["arms"])


def test_a_run_directory_is_never_mixed(demo_env, tmp_path, hash_embedder):
    out = tmp_path / "run"
    _run(demo_env, out, hash_embedder)
    with pytest.raises(FileExistsError, match="--resume"):
        _run(demo_env, out, hash_embedder)
    with pytest.raises(ValueError, match="seed: run has 0, asked 1"):
        _run(demo_env, out, hash_embedder, resume=True, seed=1)


def test_a_run_in_progress_is_reported_from_its_records_so_far(demo_env, tmp_path, hash_embedder):
    out = tmp_path / "run"
    _run(demo_env, out, hash_embedder)
    path = arm_path(out, "reasoningbank")
    records = read_records(path)
    path.write_text("".join(json.dumps(r) + "\n" for r in records[:2]), encoding="utf-8")  # stopped after 2 tasks
    (out / "results.md").unlink()

    results = report_run(out, console=Console(file=io.StringIO()), n_resamples=200)

    assert results["arms"]["reasoningbank"]["n_tasks"] == 2 and results["arms"]["no-memory"]["n_tasks"] == N
    assert results["comparisons"]["reasoningbank"]["all"]["n"] == 2  # only the tasks both arms played
    report = (out / "results.md").read_text(encoding="utf-8")
    assert "**Partial run**" in report and f"`reasoningbank` 2 of {N}" in report
    assert "`no-memory`" not in report.split("**Partial run**")[1].split("\n")[0]


def test_reporting_needs_a_run_with_records(tmp_path):
    with pytest.raises(FileNotFoundError, match="no config.json"):
        report_run(tmp_path)


def test_a_paused_arm_keeps_its_records_and_plays_on_when_no_longer_paused(demo_env, tmp_path, hash_embedder):
    out = tmp_path / "run"
    _run(demo_env, out, hash_embedder)
    _cut(arm_path(out, "reasoningbank"), 2)
    _cut(arm_path(out, "no-memory"), 2)
    counter = CallCounter()
    dspy.configure(callbacks=[counter.as_callback()])
    paused = _run(demo_env, out, hash_embedder, resume=True, pause_arms="reasoningbank")
    assert counter.calls == 2 * STEPS  # only no-memory played its 2 missing tasks
    assert [r["index"] for r in read_records(arm_path(out, "reasoningbank"))] == [0, 1]
    assert paused["arms"]["reasoningbank"]["n_tasks"] == 2 and paused["arms"]["no-memory"]["n_tasks"] == N
    sessions = json.loads((out / "config.json").read_text())["sessions"]
    assert sessions[-1]["paused_arms"] == ["reasoningbank"] and "paused_arms" not in sessions[0]

    resumed = _run(demo_env, out, hash_embedder, resume=True)
    assert [r["index"] for r in read_records(arm_path(out, "reasoningbank"))] == list(range(N))
    assert resumed["arms"]["reasoningbank"]["n_tasks"] == N


@pytest.mark.parametrize(
    ("pause", "resume", "message"),
    [
        ("no-memory", True, "no-memory is what every arm is compared with"),
        ("reasoningbank,success-only", True, "success-only not among the run's arms"),
        ("reasoningbank", False, "applies to a resumed run"),
    ],
)
def test_pausing_what_cannot_be_paused_is_a_clear_error(demo_env, tmp_path, hash_embedder, pause, resume, message):
    out = tmp_path / "run"
    if resume:
        _run(demo_env, out, hash_embedder)
    with pytest.raises(ValueError, match=message):
        _run(demo_env, out, hash_embedder, resume=resume, pause_arms=pause)


def test_a_run_written_when_compiled_was_a_flag_reports_and_resumes(demo_env, tmp_path, hash_embedder):
    """Runs before compiled prompts were given by path hold `"compiled": true` (the package's
    shipped prompts, of which none are shipped now): they still report, and resume as None."""
    out = tmp_path / "run"
    _run(demo_env, out, hash_embedder)
    config = json.loads((out / "config.json").read_text())
    assert config["config"]["compiled"] is None
    config["config"]["compiled"] = True
    (out / "config.json").write_text(json.dumps(config))
    results = report_run(out, console=Console(file=io.StringIO()), n_resamples=50)
    assert "compiled judge/extractors" in (out / "results.md").read_text().splitlines()[0]
    assert "--compiled" not in results["command"] and "--uncompiled" not in results["command"]
    _run(demo_env, out, hash_embedder, arms="reasoningbank-oracle", resume=True)  # the settings match


def test_compiled_prompts_are_a_path_every_bank_loads(demo_env, tmp_path, hash_embedder):
    from rbdspy.judge import Judge

    compiled = tmp_path / "compiled"
    compiled.mkdir()
    Judge().save(str(compiled / "judge.json"))
    out = tmp_path / "run"
    results = _run(demo_env, out, hash_embedder, compiled=compiled)
    assert results["config"]["compiled"] == str(compiled) and f"--compiled {compiled}" in results["command"]
    assert f"compiled ({compiled}) judge/extractors" in (out / "results.md").read_text()
    with pytest.raises(FileNotFoundError, match="no compiled prompts"):
        _run(demo_env, tmp_path / "other", hash_embedder, compiled=tmp_path / "absent")
    with pytest.raises(TypeError, match="the package ships none"):
        _run(demo_env, tmp_path / "other", hash_embedder, compiled=True)
