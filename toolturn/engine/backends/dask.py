"""The `dask` backend: a `distributed.LocalCluster` of `jobs` worker processes made for the run,
or the scheduler at `--address` (`tcp://HOST:8786`); the `dask` extra. Its progress channel:
Dask's worker events (`Worker.log_event`, which needs no client in the worker) to
`Client.subscribe_topic` here."""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import importlib.util
import queue
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from toolturn.engine.backends.channel import Channel, drainer
from toolturn.engine.backends.missing import missing
from toolturn.engine.forking import worker_context
from toolturn.engine.interrupts import interrupts_deferred
from toolturn.errors import UserError

__all__ = ["DASK_PRELOAD", "QUIET", "dask_executor"]


@contextmanager
def dask_executor(
    jobs: int, address: str | None
) -> Iterator[tuple[concurrent.futures.Executor, Channel]]:
    if importlib.util.find_spec("distributed") is None:
        raise missing("dask", "distributed")
    if address is None:
        # Before this process imports distributed (a second or two), so that the server's
        # imports of it and of the engine go on meanwhile, on the other core.
        worker_context(DASK_PRELOAD)
    import distributed

    with contextlib.ExitStack() as stack:
        # A Ctrl-C while the cluster made here starts waits until it is whole (it cannot be
        # closed half-started: `toolturn.engine.interrupts`), then closes it on the way out.
        with contextlib.nullcontext() if address is not None else interrupts_deferred():
            cluster = None if address is not None else stack.enter_context(
                _local_cluster(distributed, jobs)
            )
            client = stack.enter_context(_client(distributed, cluster, address))
        # The run's own topic: another run on a shared scheduler has its own.
        topic = f"sim-progress-{uuid.uuid4().hex}"
        inbox: queue.SimpleQueue[list[int]] = queue.SimpleQueue()
        # Called in the client's event-loop thread: the runner drains the inbox in its own.
        client.subscribe_topic(topic, lambda event: inbox.put(event[1]))
        stack.callback(client.unsubscribe_topic, topic)
        executor = client.get_executor(pure=False)
        try:
            yield executor, Channel(functools.partial(_dask_send, topic), drainer(inbox))
        finally:
            executor.shutdown(wait=False)


def _client(distributed: Any, cluster: Any, address: str | None) -> Any:
    """A client of the cluster made here, or of the scheduler at `address`. A scheduler that
    cannot be reached (no such host, nothing listening, the connect timeout) is the user's
    address, not the disk: distributed raises an OSError for it, which the run would otherwise
    report as the rows it could not write."""
    if cluster is not None:
        return distributed.Client(cluster)
    try:
        return distributed.Client(address)
    except OSError as error:
        raise UserError(
            f"--address {address}: cannot reach the Dask scheduler ({error})"
        ) from None
    except ValueError as error:  # not an address at all (an unknown protocol, no port)
        raise UserError(f"--address {address}: not a Dask scheduler address ({error})") from None


def _dask_send(topic: str, message: list[int]) -> None:
    """In a Dask worker's task: an event to the scheduler, which passes it to the client."""
    import distributed

    distributed.get_worker().log_event(topic, message)


# What the worker processes of a Dask cluster made for a run import before their first task: the
# forkserver's preload (`toolturn.engine.forking`), with the module of the tasks' function
# (`remote_task`).
DASK_PRELOAD = ["distributed", "toolturn.engine.task"]


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
