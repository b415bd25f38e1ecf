"""`rbdspy bench --executor ray`: each arm a Ray task on a small local cluster, with the records of
the sequential run (timings and random item ids aside), resumable the same way; a missing Ray,
an LM that cannot travel and a run directory a worker cannot see are each one clear error."""

import json
import re
import sys
import threading

import dspy
import pytest
from bench_testing import Unclosed, quiet_bench, scripted_lm
from typer.testing import CliRunner

import rbdspy.bench
import rbdspy.lm
from rbdspy.bench import BenchOptions, run_bench
from rbdspy.bench.executors import ArmJob, LocalExecutor, RayExecutor, make_executor
from rbdspy.bench.records import arm_path, read_records
from rbdspy.bench.settings import resolve
from rbdspy.cli import app
from rbdspy.lm.local_engine import AsyncLlamaEngine, LlamaEngine, fit_threads
from rbdspy.memory import MemoryStore
from rbdspy.ray_support import (
    INSTALL_HINT,
    NotPicklableError,
    RayMissingError,
    cpus_per_task,
    ensure_ray,
    task_cpus,
)

# A bank arm, a seeded one and MaTTS (three rollouts' worth of calls) beside the bare agent.
ARMS = "no-memory,reasoningbank,reasoningbank-seeded,matts-parallel-k2"
TIMING = ("wall_s",)
ITEM_ID = re.compile(r"\b[0-9a-f]{32}\b")


@pytest.fixture(scope="module")
def ray_cluster():
    """Two CPUs, started once for the module and shut down after it."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def _run(env, out, embedder, arms=ARMS, **options):
    return quiet_bench(env, out, embedder, arms, smoke=True, **options)


def _comparable(rows: list[dict], drop: tuple[str, ...] = ()) -> str:
    """The records without their timings (and `drop`), item ids (uuid4, random on every run)
    numbered in the order they first appear."""
    ids: dict[str, int] = {}
    text = json.dumps([{k: v for k, v in row.items() if k not in TIMING + drop} for row in rows], sort_keys=True)
    return ITEM_ID.sub(lambda m: f"item-{ids.setdefault(m.group(), len(ids))}", text)


def _records(out, arms=ARMS):
    return {arm: read_records(arm_path(out, arm)) for arm in arms.split(",")}


def test_ray_gives_the_records_of_the_sequential_run(ray_cluster, demo_env, tmp_path, hash_embedder):
    local = _run(demo_env, tmp_path / "local", hash_embedder)
    remote = _run(demo_env, tmp_path / "ray", hash_embedder, executor="ray")

    local_rows, ray_rows = _records(tmp_path / "local"), _records(tmp_path / "ray")
    assert all(len(rows) == 6 for rows in ray_rows.values())  # the smoke stream, every arm
    for arm in local_rows:  # the served items too: exact ties are broken by position, not by random ids
        assert _comparable(ray_rows[arm]) == _comparable(local_rows[arm]), arm
    assert sum(r["memories_added"] for r in ray_rows["matts-parallel-k2"]) > 0
    for arm in ("reasoningbank", "reasoningbank-seeded"):  # each arm's own bank, where the local run keeps it
        with MemoryStore(tmp_path / "ray" / "banks" / arm, embedder=hash_embedder) as bank:
            assert len(bank) == ray_rows[arm][-1]["bank_size"] > 0
    assert (tmp_path / "ray" / "arms" / "reasoningbank-seeded.seed.json").is_file()
    # The parent writes the same reports from the records it got back.
    for summary in ("success_rate", "n_tasks", "memories_written"):
        assert [s[summary] for s in remote["arms"].values()] == [s[summary] for s in local["arms"].values()]
    assert (tmp_path / "ray" / "results.md").is_file() and (tmp_path / "ray" / "learning_curve.png").is_file()


def test_an_interrupted_ray_run_resumes_from_its_records(ray_cluster, demo_env, tmp_path, hash_embedder):
    arms = "reasoningbank"
    _run(demo_env, tmp_path / "local", hash_embedder, arms=arms)
    out = tmp_path / "ray"
    _run(demo_env, out, hash_embedder, arms=arms, executor="ray", workers=1)
    path = arm_path(out, arms)
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:2]) + '{"index": 2, "tor')  # stopped after 2 tasks, its bank holds 6 items

    _run(demo_env, out, hash_embedder, arms=arms, executor="ray", resume=True)

    rows = read_records(path)
    assert [r["bank_size"] for r in rows] == [1, 2, 3, 4, 5, 6]  # the interrupted writes were rolled back
    assert _comparable(rows) == _comparable(read_records(arm_path(tmp_path / "local", arms)))


def test_rbdspy_bench_executor_ray_smoke(ray_cluster, demo_env, tmp_path, monkeypatch, mlflow_store):
    """`rbdspy bench --executor ray --smoke` down its real path: default arms, scripted LM, hash
    embedder, real games (the parent's stream from the session JVM, each worker its own)."""
    import rbdspy.envs.task_sets
    from rbdspy.memory.embedders import HashEmbedder

    monkeypatch.setattr(rbdspy.envs.task_sets, "open_task_set", lambda env, task_set="demo": Unclosed(demo_env))
    monkeypatch.setattr(rbdspy.lm, "make_lm", lambda spec: scripted_lm())
    monkeypatch.setattr(rbdspy.lm, "make_embedder", lambda spec: HashEmbedder(dim=64))
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["bench", "--smoke", "--executor", "ray", "--workers", "2", "--out", str(out)])
    assert result.exit_code == 0, result.output
    saved = json.loads((out / "results.json").read_text())
    assert list(saved["arms"]) == ["no-memory", "reasoningbank", "reasoningbank-oracle"]
    assert all(s["n_tasks"] == 6 for s in saved["arms"].values())
    assert all(r["error"] is None for arm in saved["arms"] for r in read_records(arm_path(out, arm)))


def test_without_ray_the_run_stops_before_any_work_with_the_install_line(monkeypatch, tmp_path, hash_embedder):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    with pytest.raises(RayMissingError, match=re.escape(INSTALL_HINT)):
        run_bench(scripted_lm(), hash_embedder, tmp_path / "run", executor="ray", environment=object(), mlflow=False)
    assert not (tmp_path / "run").exists()

    monkeypatch.setattr(rbdspy.lm, "make_lm", lambda spec: scripted_lm())
    monkeypatch.setattr(rbdspy.lm, "make_embedder", lambda spec: hash_embedder)
    argv = ["bench", "--smoke", "--executor", "ray", "--out", str(tmp_path / "run")]
    result = CliRunner().invoke(app, argv, env={"COLUMNS": "200"})
    assert result.exit_code == 2 and 'pip install "rbdspy[scale]"' in result.output
    assert "Traceback" not in result.output and not (tmp_path / "run").exists()


class _LockedLM:
    def __init__(self):
        self.lock = threading.Lock()


def test_an_lm_that_cannot_travel_is_refused_before_any_arm_plays(hash_embedder):
    pytest.importorskip("ray")
    with pytest.raises(NotPicklableError, match="the LM .*--executor local"):
        RayExecutor().run_arms([], _LockedLM(), hash_embedder)


def test_a_worker_that_cannot_see_the_run_directory_says_so(ray_cluster, tmp_path):
    job = ArmJob("no-memory", resolve(BenchOptions(max_steps=2)), [], tmp_path / "elsewhere")
    with pytest.raises(
        ValueError, match="cannot see the run directory .*--ray-address, --out must be on a filesystem"
    ) as error:
        RayExecutor().run_arms([job], scripted_lm(), None)
    assert type(error.value) is ValueError  # the worker's own error, not Ray's wrapper: the CLI shows one line


def _threads_in_task(ray, cpus):
    """A Ray task given `cpus` (defined here, so it travels by value) that fits the LM it is given
    and tells its engine's threads (a provider LM's engine selection), and whether the async engine
    DSPy calls still drives that same engine."""

    def threads(lm):
        fit_threads(lm, task_cpus())
        if not isinstance(lm.engine, LlamaEngine):
            return lm.engine, None
        return lm.engine.n_threads, lm._async_engine_spec.sync is lm.engine

    return ray.remote(num_cpus=cpus)(threads)


def _local_lm(n_threads=None):
    engine = LlamaEngine("local-fast", n_threads=n_threads)
    return dspy.LM("local/model.gguf", engine=engine, async_engine=AsyncLlamaEngine(engine))


@pytest.mark.parametrize(("cpus", "n_threads", "expected"), [(1, None, 1), (2, None, 2), (0.5, None, 1), (1, 3, 3)])
def test_an_embedded_engine_in_a_ray_task_takes_the_task_s_cpus_unless_given_its_threads(
    ray_cluster, cpus, n_threads, expected
):
    lm = _local_lm(n_threads)
    assert ray_cluster.get(_threads_in_task(ray_cluster, cpus).remote(lm)) == (expected, True)
    assert lm.engine.n_threads == n_threads  # the worker's copy changed, not the caller's


def test_outside_a_ray_task_and_for_a_provider_lm_the_threads_are_left_alone(ray_cluster):
    lm = _local_lm()
    assert task_cpus() is None  # the driver: no task, no CPUs of its own
    fit_threads(lm, task_cpus())
    assert lm.engine.n_threads is None
    provider = dspy.LM("openai/gpt-4o-mini")
    assert ray_cluster.get(_threads_in_task(ray_cluster, 1).remote(provider)) == ("auto", None)


@pytest.mark.parametrize(("n_tasks", "expected"), [(1, 2), (2, 1), (3, 1)])
def test_tasks_played_at_once_share_the_cluster_s_cpus(ray_cluster, n_tasks, expected):
    assert cpus_per_task(n_tasks) == expected  # the module's cluster has 2 CPUs on one node


def test_executors_are_chosen_by_name_and_local_is_the_default():
    assert isinstance(make_executor(), LocalExecutor)
    with pytest.raises(ValueError, match="unknown executor 'dask'"):
        make_executor("dask")
    with pytest.raises(ValueError, match="--executor ray only"):
        make_executor("local", workers=2)


def test_a_local_cluster_is_sized_by_workers_and_an_address_is_joined(monkeypatch):
    ray = pytest.importorskip("ray")
    calls = []
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", lambda **kwargs: calls.append(kwargs))
    assert ensure_ray(None, 2) is True and ensure_ray("auto") is True
    assert calls == [{"num_cpus": 2, "include_dashboard": False}, {"address": "auto"}]
    monkeypatch.setattr(ray, "is_initialized", lambda: True)
    assert ensure_ray("auto") is False and len(calls) == 2  # an initialised Ray is used as it is


@pytest.fixture
def captured(monkeypatch):
    seen = {}
    # The command hands run_bench one BenchOptions; the stand-in keeps its fields, by name.
    monkeypatch.setattr(
        rbdspy.bench,
        "run_bench",
        lambda lm, embedder, out, options, **kwargs: seen.update(options.as_kwargs(), args=(lm, embedder, out)),
    )
    monkeypatch.setattr(rbdspy.lm, "make_lm", lambda spec: f"lm:{spec}")
    monkeypatch.setattr(rbdspy.lm, "make_embedder", lambda spec: f"emb:{spec}")
    return seen


def test_bench_command_threads_the_executor_options(captured):
    argv = ["bench", "--smoke", "--executor", "ray", "--ray-address", "auto", "--workers", "3"]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 0, result.output
    assert (captured["executor"], captured["ray_address"], captured["workers"]) == ("ray", "auto", 3)
    assert CliRunner().invoke(app, ["bench", "--smoke"]).exit_code == 0
    assert (captured["executor"], captured["ray_address"], captured["workers"]) == ("local", None, None)


@pytest.mark.parametrize(
    "argv, hint",
    [
        (["--executor", "dask"], "'dask' is not one of local, ray"),
        (["--workers", "2"], "applies to --executor ray only"),
        (["--ray-address", "auto"], "applies to --executor ray only"),
        (["--executor", "ray", "--workers", "0"], "must be at least 1"),
    ],
)
def test_bench_command_refuses_bad_executor_options(captured, argv, hint):
    result = CliRunner().invoke(app, ["bench", *argv], env={"COLUMNS": "200"})
    assert result.exit_code == 2 and hint in result.output
    assert captured == {}
