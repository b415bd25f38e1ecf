"""Where the benchmark's arms are played: one after another in this process, or each as a Ray task.

Why a seam: arms share nothing while they play. Each starts from its own empty bank under
banks/<arm>/, appends to its own arms/<arm>.jsonl, and calls an LM whose cache is off, so arms can
run at the same time on other cores or machines and still write the records the sequential run
writes. The runner prepares the directory and the stream, an executor plays the arms, and the
runner writes the reports from the records it gets back; only the executor knows where arms run.

- `LocalExecutor` ("local", the default): the arms in this process, task by task (every arm on
  task i before any arm on task i+1, `player.play_task_by_task`).
- `RayExecutor` ("ray"): one Ray task per arm (a seeded arm's seeding included), given as an
  `ArmJob` (plain data: the arm, its stream, the run's resolved settings). The worker opens its
  own environment from those settings (`--env`, `--task-set`, `--world-seed`: a live environment
  cannot be pickled), then plays its tasks with the same ArmPlayer the local run uses, writing
  records and bank into the run's directory, so --resume works the same. That directory must be
  the same path on every node: it is on a local cluster; on a remote one (`--ray-address`) it has
  to be a shared filesystem, and a worker that cannot see it says so before playing anything. Ray is imported lazily
  (`rbdspy.ray_support`): without the `scale` extra only this executor is unavailable.
"""

from __future__ import annotations

import dataclasses
import socket
from pathlib import Path
from typing import Any

import dspy

from rbdspy.bench.arm_job import ArmJob
from rbdspy.bench.player import ArmPlayer, play_task_by_task, run_arm
from rbdspy.bench.records import arm_path, read_records
from rbdspy.bench.settings import open_environment
from rbdspy.lm.local_engine import fit_threads
from rbdspy.ray_support import check_picklable, cpus_per_task, ensure_ray, get, import_ray, task_cpus

EXECUTORS = ("local", "ray")
POLL_S = 1.0  # how often the parent reads the arms' record files to move the progress bars
_PICKLE_FIX = "build it from a spec the workers can rebuild (--lm/--embedder), or use --executor local"


class LocalExecutor:
    """The arms in this process, on the environment the runner opened, task by task."""

    name = "local"

    def run_arms(self, jobs: list[ArmJob], lm, embedder, environment, progress=None) -> dict[str, list[dict]]:
        # JSONAdapter: the embedded engine turns the output schema into constrained decoding, so
        # a small local model's actions and lessons parse (as in `rbdspy demo`).
        with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
            return play_task_by_task([ArmPlayer(job, environment, embedder) for job in jobs], progress)


def play_arm(job: ArmJob, lm, embedder) -> list[dict[str, Any]]:
    """One arm in a Ray worker: its own environment, the same DSPy settings as the local run."""
    if not (job.out_dir / "config.json").is_file():
        raise ValueError(
            f"the Ray worker on {socket.gethostname()} cannot see the run directory {job.out_dir}: with "
            "--ray-address, --out must be on a filesystem every node mounts at the same path"
        )
    fit_threads(lm, task_cpus())  # the CPUs this arm's task was given, not every core
    environment = open_environment(job.settings, job.out_dir)
    try:
        with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
            return run_arm(job, environment, embedder)
    finally:
        environment.close()


class RayExecutor:
    """One Ray task per arm. `address` joins a running cluster; without it a local one is started
    with `workers` CPUs (all cores when None) and shut down afterwards. A Ray this process already
    initialised is used as it is. `workers` also caps the arms in flight at once."""

    name = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None):
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
            raise ValueError(f"workers must be an integer >= 1; got {workers!r}")
        import_ray()  # a missing install fails here, before any environment is opened
        self.address = address
        self.workers = workers

    def run_arms(self, jobs: list[ArmJob], lm, embedder, environment=None, progress=None) -> dict[str, list[dict]]:
        ray = import_ray()
        check_picklable(lm, f"the LM ({type(lm).__name__})", _PICKLE_FIX)
        check_picklable(embedder, f"the embedder ({type(embedder).__name__})", _PICKLE_FIX)
        # Workers do not share this process's working directory.
        jobs = [dataclasses.replace(job, out_dir=Path(job.out_dir).resolve()) for job in jobs]
        started = ensure_ray(self.address, self.workers)
        try:
            return self._play(ray, jobs, lm, embedder, progress)
        finally:
            if started:
                ray.shutdown()

    def _play(self, ray, jobs: list[ArmJob], lm, embedder, progress) -> dict[str, list[dict]]:
        limit = self.workers or len(jobs)
        # Each arm asks for its share of the cluster, and its embedded model computes on that many
        # threads (`rbdspy.lm.local_engine.fit_threads`).
        cpus = cpus_per_task(min(limit, len(jobs)))
        remote = ray.remote(num_cpus=cpus, max_retries=0)(play_arm)
        lm_ref, embedder_ref = ray.put(lm), ray.put(embedder)
        bars = {}
        if progress is not None:
            for job in jobs:
                done = len(read_records(arm_path(job.out_dir, job.name)))
                bars[job.name] = progress.add_task(job.name, total=len(job.stream), completed=done)
        waiting, running, records = list(jobs), {}, {}
        try:
            while waiting or running:
                while waiting and len(running) < limit:
                    job = waiting.pop(0)
                    running[remote.remote(job, lm_ref, embedder_ref)] = job
                ready, _ = ray.wait(list(running), num_returns=1, timeout=POLL_S)
                for ref in ready:
                    job = running.pop(ref)
                    records[job.name] = get(ref)  # an arm's error is raised as its own
                for job in jobs:
                    if job.name in bars:
                        rows = records.get(job.name) or read_records(arm_path(job.out_dir, job.name))
                        progress.update(bars[job.name], completed=len(rows))
        except BaseException:
            # The other arms stop too, as the sequential run would; what they finished is on disk.
            for ref in running:
                ray.cancel(ref, force=True)
            raise
        return {job.name: records[job.name] for job in jobs}


def make_executor(name: str = "local", *, address: str | None = None, workers: int | None = None):
    """The executor called `name` ("local" or "ray"); bad settings raise ValueError, a missing
    Ray `rbdspy.ray_support.RayMissingError`."""
    if name == "local":
        if address is not None or workers is not None:
            raise ValueError("--ray-address and --workers apply to --executor ray only")
        return LocalExecutor()
    if name == "ray":
        return RayExecutor(address=address, workers=workers)
    raise ValueError(f"unknown executor {name!r}; choose one of {', '.join(EXECUTORS)}")
