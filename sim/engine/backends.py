"""Where a run's tasks run: this machine's processes, a Dask cluster or a Ray cluster.

- `local` (the default, nothing to install): the runner's own worker processes
  (`sim.engine.runner`). Not the standard library's `ProcessPoolExecutor`: its workers are
  started with SIGINT open (a Ctrl-C during their start-up prints their tracebacks), its
  shutdown waits for the tasks running (a Ctrl-C would wait for them to finish), and its results
  come through a thread of its own that a worker dying mid-message can leave waiting; the
  runner's pool blocks SIGINT in its workers, terminates them at once and reads its pipes itself.
- `dask`: a `distributed.LocalCluster` of `jobs` worker processes, or the scheduler at
  `--address` (`tcp://HOST:8786`); the `dask` extra (`pip install 'toolturn-sim[dask]'`).
- `ray`: `ray.init()` with `jobs` CPUs, or the cluster at `--address`; the `ray` extra.

Dask and Ray are imported only when chosen; missing, they are a `UserError` saying what to
install. Each gives a `concurrent.futures`-style executor (`submit(fn, *args) -> Future`), one
code path for both in the runner. Tasks write their parts into the run's parts folder, so a
cluster's workers must see that folder (the same machine, or a shared file system).
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from sim.errors import UserError

BACKENDS = ("local", "dask", "ray")


class BackendMissing(UserError):
    """A backend whose extra is not installed."""


@contextmanager
def executor_for(
    backend: str, *, jobs: int, address: str | None = None
) -> Iterator[concurrent.futures.Executor]:
    """A `concurrent.futures.Executor` on `backend` (`dask` or `ray`), shut down on leaving,
    its cluster with it when it made one."""
    if backend == "dask":
        with _dask(jobs, address) as executor:
            yield executor
    elif backend == "ray":
        with _ray(jobs, address) as executor:
            yield executor
    else:
        raise UserError(f"--backend: {backend!r} has no executor; choose one of {BACKENDS}")


def _missing(backend: str, module: str) -> BackendMissing:
    return BackendMissing(
        f"--backend {backend}: {module} is not installed "
        f"(install it with: pip install 'toolturn-sim[{backend}]')"
    )


@contextmanager
def _dask(jobs: int, address: str | None) -> Iterator[concurrent.futures.Executor]:
    try:
        import distributed
    except ImportError:
        raise _missing("dask", "distributed") from None
    cluster = None
    if address is None:
        # A free port for the dashboard (when bokeh is there): None still tries 8787, and two
        # runs at once would collide.
        # distributed's constructors are not annotated.
        cluster = distributed.LocalCluster(  # type: ignore[no-untyped-call]
            n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=":0",
            silence_logs=50,
        )
    try:
        with distributed.Client(  # type: ignore[no-untyped-call]
            cluster if cluster is not None else address
        ) as client:
            executor = client.get_executor(pure=False)
            try:
                yield executor
            finally:
                executor.shutdown(wait=False)
    finally:
        if cluster is not None:
            cluster.close()


class _RayExecutor(concurrent.futures.Executor):
    """`submit` as a Ray remote call; its ObjectRef's `future()` is the Future."""

    def __init__(self, ray: Any) -> None:
        self._ray = ray
        self._remotes: dict[Callable[..., Any], Any] = {}

    def submit(
        self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any
    ) -> concurrent.futures.Future[Any]:
        remote = self._remotes.get(fn)
        if remote is None:
            remote = self._remotes[fn] = self._ray.remote(max_retries=0)(fn)
        future: concurrent.futures.Future[Any] = remote.remote(*args, **kwargs).future()
        return future


@contextmanager
def _ray(jobs: int, address: str | None) -> Iterator[concurrent.futures.Executor]:
    try:
        import ray
    except ImportError:
        raise _missing("ray", "ray") from None
    if address is None:
        ray.init(num_cpus=jobs, include_dashboard=False, log_to_driver=False)
    else:
        ray.init(address=address, log_to_driver=False)
    try:
        yield _RayExecutor(ray)
    finally:
        ray.shutdown()
