"""A run's tasks on a cluster's `concurrent.futures`-style executor (`toolturn.engine.backends`:
Dask's or Ray's), one code path for both: each task submitted, its counters taken as it
finishes, its sessions finished read from the backend's progress channel in between."""

from __future__ import annotations

import concurrent.futures

from toolturn.engine.backends.channel import REPORT_EVERY_S, Channel
from toolturn.engine.batch import Batch
from toolturn.engine.plan import Task
from toolturn.engine.task import (
    STOPS,
    TaskFailure,
    TaskStats,
    failure_of,
    remote_task,
)
from toolturn.engine.unit_progress import UnitTracker

__all__ = ["run_on_executor"]


def run_on_executor(
    executor: concurrent.futures.Executor, channel: Channel, batch: Batch
) -> None:
    """Every task of the batch submitted to `executor` (a Dask or Ray one), its counters taken
    as it finishes, a failure into `failures`, its sessions as they finish read from `channel`
    in between. A failure that stops the run (`STOPS`) or an interrupt cancels what has not
    started."""
    todo, progress, stats, failures = batch.todo, batch.progress, batch.stats, batch.failures
    data = batch.scenario_data()
    parts, trace = batch.parts, batch.trace
    futures = {
        executor.submit(
            remote_task, data[task.unit.point], task, str(parts), trace,
            channel.reporter(index) if progress.reporting else None,
        ): index
        for index, task in todo
    }
    tasks = dict(todo)
    pending = set(futures)
    try:
        while pending:
            done, pending = concurrent.futures.wait(
                pending, timeout=REPORT_EVERY_S, return_when=concurrent.futures.FIRST_COMPLETED
            )
            for index, finished in channel.drain():
                if index not in stats:  # a report can come after its task's result
                    progress.update(index, finished)
            for future in done:
                _take(future, futures[future], tasks, progress, stats, failures)
    except BaseException:
        for future in futures:
            future.cancel()
        raise


def _take(
    future: concurrent.futures.Future[TaskStats],
    index: int,
    tasks: dict[int, Task],
    progress: UnitTracker,
    stats: dict[int, TaskStats],
    failures: dict[int, TaskFailure],
) -> None:
    """A finished task's counters, or its failure; a failure that stops the run raised."""
    error = future.exception()
    if isinstance(error, STOPS):
        raise error
    if error is not None:
        failures[index] = failure_of(tasks[index], error)
        return
    stats[index] = future.result()
    progress.update(index, stats[index].sessions_finished)


