"""Where a run's tasks run: this machine's processes, a Dask cluster or a Ray cluster.

- `local` (the default, nothing to install): the runner's own worker processes
  (`local`). Not the standard library's `ProcessPoolExecutor`: its workers are
  started with SIGINT open (a Ctrl-C during their start-up prints their tracebacks), its
  shutdown waits for the tasks running (a Ctrl-C would wait for them to finish), and its results
  come through a thread of its own that a worker dying mid-message can leave waiting; the
  runner's pool blocks SIGINT in its workers, terminates them at once and reads its pipes itself.
- `dask`: a `distributed.LocalCluster` of `jobs` worker processes, or the scheduler at
  `--address` (`tcp://HOST:8786`); the `dask` extra (`pip install 'toolturn-sim[dask]'`).
- `ray`: `ray.init()` with `jobs` CPUs, or the cluster at `--address`; the `ray` extra.

Dask and Ray are imported only when chosen; missing, they are a `UserError` saying what to
install. Each gives a `concurrent.futures`-style executor (`submit(fn, *args) -> Future`), one
code path for both in the runner, and a progress channel (`Channel`) on which a task reports its
sessions finished as it goes: Dask's worker events (`Worker.log_event`, which needs no client in
the worker, to `Client.subscribe_topic` here), a Ray queue actor (`ray.util.queue.Queue`). A
task reports at most every `REPORT_EVERY_S` (its result carries the final count). Tasks write
their parts into the run's parts folder, so a cluster's workers must see that folder (the same
machine, or a shared file system).

One module each: `local` (the process pool), `dask`, `ray`; `cluster` runs a plan on Dask's or
Ray's executor, `channel` carries the tasks' progress, `missing` says what to install.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Iterator
from contextlib import contextmanager

from toolturn.engine.backends.channel import Channel
from toolturn.engine.backends.missing import BackendMissing
from toolturn.errors import UserError

__all__ = ["BACKENDS", "BackendMissing", "executor_for"]

BACKENDS = ("local", "dask", "ray")


@contextmanager
def executor_for(
    backend: str, *, jobs: int, address: str | None = None
) -> Iterator[tuple[concurrent.futures.Executor, Channel]]:
    """A `concurrent.futures.Executor` on `backend` (`dask` or `ray`) and its progress channel,
    shut down on leaving, its cluster with it when it made one."""
    if backend == "dask":
        from toolturn.engine.backends.dask import dask_executor

        with dask_executor(jobs, address) as made:
            yield made
    elif backend == "ray":
        from toolturn.engine.backends.ray import ray_executor

        with ray_executor(jobs, address) as made:
            yield made
    else:
        raise UserError(f"--backend: {backend!r} has no executor; choose one of {BACKENDS}")
