"""Ray, for the optional `scale` extra, imported only when asked for.

rbdspy runs on one machine without Ray. Two things can fan work out to Ray workers:
`rbdspy bench --executor ray` (one Ray task per arm) and `MaTTS(..., executor="ray")` (one Ray
task per parallel rollout). Both come here, so a missing install reads the same everywhere (one
line naming the extra), a cluster is joined or started the same way, and whatever cannot travel
to a worker is refused before any work with the reason, not halfway through a run.
"""

from __future__ import annotations

from typing import Any

INSTALL_HINT = 'pip install "rbdspy[scale]"'


class RayMissingError(ImportError):
    """Ray was asked for but is not installed."""


class NotPicklableError(TypeError):
    """Something that has to travel to a Ray worker cannot be pickled."""


def import_ray() -> Any:
    """The `ray` module, or RayMissingError telling how to install it."""
    try:
        import ray  # optional: the scale extra (ray)
    except ImportError as error:
        raise RayMissingError(f"Ray is not installed; to run on Ray: {INSTALL_HINT}") from error
    return ray


def ensure_ray(address: str | None = None, num_cpus: int | None = None) -> bool:
    """Makes sure this process is connected to Ray; True when this call started the connection
    (the caller then shuts it down when done).

    A Ray already initialised in this process (a notebook's own `ray.init(...)`) is used as is.
    Otherwise `address` joins a running cluster ("auto", "host:6379", "ray://host:10001"), and
    no address starts a local one with `num_cpus` workers (all cores when None; Ray's own
    RAY_ADDRESS environment variable still applies)."""
    ray = import_ray()
    if ray.is_initialized():
        return False
    if address:
        ray.init(address=address)
    else:
        ray.init(num_cpus=num_cpus, include_dashboard=False)
    return True


def check_picklable(obj: Any, what: str, fix: str) -> None:
    """Raises NotPicklableError when `obj` cannot be sent to a Ray worker (Ray pickles with cloudpickle)."""
    ray = import_ray()
    try:
        ray.cloudpickle.dumps(obj)
    except Exception as error:  # whatever pickling raises (TypeError, PicklingError, ...)
        raise NotPicklableError(
            f"{what} cannot be sent to Ray workers ({type(error).__name__}: {error}); {fix}"
        ) from error


def cpus_per_task(n_tasks: int) -> int:
    """The CPUs each of `n_tasks` Ray tasks played at once should ask for: the connected cluster's
    CPUs shared between them, at least 1 and at most the smallest node's (so every node can take
    one). With more tasks than CPUs each asks for 1, and Ray queues the rest."""
    ray = import_ray()
    nodes = [node["Resources"].get("CPU", 0) for node in ray.nodes() if node.get("Alive")]
    total = int(ray.cluster_resources().get("CPU", 1))
    smallest = int(min((cpus for cpus in nodes if cpus >= 1), default=1))
    return max(1, min(total // max(1, n_tasks), smallest))


def task_cpus() -> float | None:
    """The CPUs Ray gave the task this code runs in; None outside a Ray task (or for a task that
    asked for none)."""
    ray = import_ray()
    if not ray.is_initialized():
        return None
    context = ray.get_runtime_context()
    if context.get_task_id() is None:  # the driver
        return None
    return context.get_assigned_resources().get("CPU") or None


def get(refs: Any) -> Any:
    """`ray.get(refs)`, except that a task that raised raises here the exception it raised (the
    worker's traceback chained to it), not Ray's wrapper: a caller catches a ValueError or an
    LMSetupError from a Ray task as it would from the same call made in this process."""
    ray = import_ray()
    try:
        return ray.get(refs)
    except ray.exceptions.RayTaskError as error:
        cause = getattr(error, "cause", None)
        if isinstance(cause, Exception):
            raise cause from error
        raise
