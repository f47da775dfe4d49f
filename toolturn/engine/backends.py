"""Where a run's tasks run: this machine's processes, a Dask cluster or a Ray cluster.

- `local` (the default, nothing to install): the runner's own worker processes
  (`toolturn.engine.runner`). Not the standard library's `ProcessPoolExecutor`: its workers are
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
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import importlib.util
import queue
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from toolturn.engine.forking import worker_context
from toolturn.errors import UserError

BACKENDS = ("local", "dask", "ray")


class BackendMissing(UserError):
    """A backend whose extra is not installed."""


# A task's progress goes out at most this often (seconds): enough for a bar, few messages.
REPORT_EVERY_S = 0.2


class Reporter:
    """A task's progress callback in a worker (picklable: it travels with the task): sends
    (task index, sessions finished) through `send`, at most every `REPORT_EVERY_S`."""

    def __init__(self, send: Callable[[list[int]], None], index: int) -> None:
        self._send = send
        self._index = index
        self._last: float | None = None  # the first report goes at once

    def __call__(self, finished: int) -> None:
        now = time.monotonic()
        if self._last is None or now - self._last >= REPORT_EVERY_S:
            self._last = now
            self._send([self._index, finished])


class Channel:
    """Where the tasks' `Reporter`s send and the runner reads: `drain` returns the
    (task index, sessions finished) sent since the last call, oldest first."""

    def __init__(
        self, send: Callable[[list[int]], None], drain: Callable[[], list[list[int]]]
    ) -> None:
        self._send = send
        self._drain = drain

    def reporter(self, index: int) -> Reporter:
        return Reporter(self._send, index)

    def drain(self) -> list[tuple[int, int]]:
        return [(index, finished) for index, finished in self._drain()]


@contextmanager
def executor_for(
    backend: str, *, jobs: int, address: str | None = None
) -> Iterator[tuple[concurrent.futures.Executor, Channel]]:
    """A `concurrent.futures.Executor` on `backend` (`dask` or `ray`) and its progress channel,
    shut down on leaving, its cluster with it when it made one."""
    if backend == "dask":
        with _dask(jobs, address) as made:
            yield made
    elif backend == "ray":
        with _ray(jobs, address) as made:
            yield made
    else:
        raise UserError(f"--backend: {backend!r} has no executor; choose one of {BACKENDS}")


def _missing(backend: str, module: str) -> BackendMissing:
    return BackendMissing(
        f"--backend {backend}: {module} is not installed "
        f"(install it with: pip install 'toolturn-sim[{backend}]')"
    )


@contextmanager
def _dask(
    jobs: int, address: str | None
) -> Iterator[tuple[concurrent.futures.Executor, Channel]]:
    if importlib.util.find_spec("distributed") is None:
        raise _missing("dask", "distributed")
    if address is None:
        # Before this process imports distributed (a second or two), so that the server's
        # imports of it and of the engine go on meanwhile, on the other core.
        worker_context(DASK_PRELOAD)
    import distributed

    with contextlib.ExitStack() as stack:
        cluster = None if address is not None else stack.enter_context(
            _local_cluster(distributed, jobs)
        )
        # distributed's constructors are not annotated.
        client = stack.enter_context(
            distributed.Client(cluster if cluster is not None else address)  # type: ignore[no-untyped-call]
        )
        # The run's own topic: another run on a shared scheduler has its own.
        topic = f"sim-progress-{uuid.uuid4().hex}"
        inbox: queue.SimpleQueue[list[int]] = queue.SimpleQueue()
        # Called in the client's event-loop thread: the runner drains the inbox in its own.
        client.subscribe_topic(topic, lambda event: inbox.put(event[1]))
        stack.callback(client.unsubscribe_topic, topic)
        executor = client.get_executor(pure=False)
        try:
            yield executor, Channel(functools.partial(_dask_send, topic), _drainer(inbox))
        finally:
            executor.shutdown(wait=False)


def _dask_send(topic: str, message: list[int]) -> None:
    """In a Dask worker's task: an event to the scheduler, which passes it to the client."""
    import distributed

    distributed.get_worker().log_event(topic, message)


def _drainer(inbox: queue.SimpleQueue[list[int]]) -> Callable[[], list[list[int]]]:
    def drain() -> list[list[int]]:
        messages = []
        with contextlib.suppress(queue.Empty):
            while True:
                messages.append(inbox.get_nowait())
        return messages

    return drain


# What the worker processes of a Dask cluster made for a run import before their first task: the
# forkserver's preload (`toolturn.engine.forking`), with the module of the tasks' function.
DASK_PRELOAD = ["distributed", "toolturn.engine.runner"]


# Dask's periodic work in the cluster made for a run that nobody sees (its dashboard is on a port
# no one is told of, its logs are silenced), made rare: each callback wakes a process of the
# cluster, and a worker's wake takes the GIL from its task. Measured by thread (/proc) on a
# host at a load of 11 to 20: the four together took an idle 2-worker cluster from 2.8-3.2 s
# of CPU in 30 s to 0.5-0.6 s (wakes of its event loops from about 85 a second in each process
# to 4-10), and the cluster's CPU beyond its task threads on the bench's 16 simulations of 40
# sessions (80 s of wall) from 8.5 s to 4.0 s. Not set for a cluster at --address: its
# configuration is its owner's.
QUIET: dict[str, object] = {
    # The worker's statistical profiler (the dashboard's Profile page, Client.profile): every
    # 10 ms its event loop wakes and walks the running task's stack (off: a worker's wakes,
    # idle, from about 85 a second to 48).
    "distributed.worker.profile.enabled": False,
    # The event loop's health tick (its "unresponsive" warning, the dashboard's figure), every
    # 20 ms in the scheduler, each nanny and each worker (1 s: the wakes of this process's
    # loop, which runs the scheduler and the nannies, from about 80 a second to 20).
    "distributed.admin.tick.interval": "1s",
    # psutil's samples of CPU, memory, network and disk for the dashboard and the scheduler's
    # figures, every 0.5 s in each of those servers (with the next: that loop's wakes from 20
    # a second to 11).
    "distributed.admin.system-monitor.interval": "5s",
    # The nanny's and the worker's memory checks (pause at 80%, restart at 95% of the memory
    # limit), every 0.1 s: a simulation's memory grows over minutes, not in a second.
    "distributed.worker.memory.monitor-interval": "1s",
}


@contextmanager
def _local_cluster(distributed: Any, jobs: int) -> Iterator[Any]:
    """A LocalCluster of `jobs` worker processes forked from this process's forkserver (started
    by the caller), closed on leaving: started in milliseconds with `DASK_PRELOAD` imported
    (Dask's default, spawn, imports it all again in each), and with SIGINT blocked, so that a
    Ctrl-C reaches only the run's own process, which closes the cluster (a worker that took the
    Ctrl-C itself printed its CancelledError traceback while the cluster closed)."""
    import dask
    import distributed.utils

    # distributed, on its first forkserver start, imports pandas, lz4 and more into this process
    # (1.3 s measured) only to name them as the server's preload, which our server, running
    # already, ignores: that flag (private; without it, only that time is lost) says it is done.
    distributed.utils._forkserver_preload_set = True
    # Read by a nanny whenever it starts a worker (a restart too), and passed to the worker:
    # kept while the cluster lives.
    with dask.config.set({"distributed.worker.multiprocessing-method": "forkserver", **QUIET}):
        # A free port for the dashboard (when bokeh is there): None still tries 8787, and two
        # runs at once would collide.
        with distributed.LocalCluster(
            n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=":0",
            silence_logs=50,
        ) as cluster:
            yield cluster


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
def _ray(jobs: int, address: str | None) -> Iterator[tuple[concurrent.futures.Executor, Channel]]:
    try:
        import ray
        from ray.util.queue import Queue
    except ImportError:
        raise _missing("ray", "ray") from None
    if address is None:
        ray.init(num_cpus=jobs, include_dashboard=False, log_to_driver=False)
    else:
        ray.init(address=address, log_to_driver=False)
    try:
        # An actor of its own: needs no CPU of the ones the tasks use.
        inbox = Queue(actor_options={"num_cpus": 0})

        def drain() -> list[list[int]]:
            waiting = inbox.qsize()
            return list(inbox.get_nowait_batch(waiting)) if waiting else []

        yield _RayExecutor(ray), Channel(functools.partial(_ray_send, inbox), drain)
    finally:
        ray.shutdown()


def _ray_send(inbox: Any, message: list[int]) -> None:
    """In a Ray task: onto the run's queue actor (it never fills: no bound)."""
    inbox.put_nowait(message)
