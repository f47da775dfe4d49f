"""The `local` backend: a run's tasks in worker processes of this machine, each taking one task
at a time over its own pipe; a worker sends back only the task's counters (its rows are in its
parts).

The workers are forks of multiprocessing's forkserver with the engine preloaded (`PRELOAD`;
`toolturn.engine.forking` says why that start method): ready in milliseconds where a spawned worker
spent about 1.3 s importing the engine again, and never seeing a Ctrl-C.

A Ctrl-C reaches the whole process group, but only the parent acts on it: workers (and the
forkserver) start with SIGINT blocked and never see it. When the parent is interrupted (or a
task stops the run) it terminates its workers before the exception goes on, so the run ends
promptly, without workers' tracebacks or workers left behind. The parent alone reads the
pipes, in its main thread (no pool thread a half-sent result could leave waiting forever, as
with `concurrent.futures`). A worker whose parent is gone (killed by SIGKILL, which no handler
sees) exits at once and quietly: it watches its parent's sentinel, and a message it can no
longer send ends it rather than raising. A worker that dies (killed, out of memory, failing in
its own start-up) ends the run with `WorkerLost`, which says so (its broken pipe is an OSError,
but not the disk's).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from toolturn.engine import task as tasks
from toolturn.engine.batch import Batch
from toolturn.engine.forking import sigint_blocked, worker_context
from toolturn.engine.plan import Task
from toolturn.engine.task import STOPS, TaskFailure, TaskStats, failure_of
from toolturn.engine.unit_progress import UnitTracker
from toolturn.scenario.schema import Scenario

__all__ = ["PRELOAD", "WorkerLost", "WorkerTraceback", "run_parallel"]


# What a worker runs: imported once by the forkserver, so that its forks have it (module
# docstring). This module imports the simulation and the part writers (pyarrow, simpy, pydantic).
PRELOAD = ["toolturn.engine.backends.local"]


def run_parallel(batch: Batch, jobs: int) -> None:
    """Every task of the batch on `jobs` worker processes (module docstring)."""
    progress, trace, parts = batch.progress, batch.trace, batch.parts
    stats, failures = batch.stats, batch.failures
    data = batch.scenario_data()
    todo = list(batch.todo)
    expected = len(stats) + len(todo)
    workers: dict[Connection, BaseProcess] = {}
    try:
        try:
            context = worker_context(PRELOAD)
            for _ in range(min(jobs, len(todo))):
                ours, theirs = context.Pipe()
                worker = context.Process(
                    target=_work,
                    args=(theirs, data, progress.reporting, trace, str(parts)),
                    daemon=True,
                )
                with sigint_blocked():
                    worker.start()
                theirs.close()
                workers[ours] = worker
                _give(ours, worker, todo.pop(0))
        except OSError as error:  # no process to be had (fork's EAGAIN, too many files)
            raise WorkerLost(f"could not start a worker process ({error})") from error
        while len(stats) + len(failures) < expected:
            for connection in wait(list(workers)):
                assert isinstance(connection, Connection)
                _receive(connection, workers[connection], todo, stats, failures, progress)
    finally:
        _end(workers)


def _receive(
    connection: Connection,
    worker: BaseProcess,
    todo: list[tuple[int, Task]],
    stats: dict[int, TaskStats],
    failures: dict[int, TaskFailure],
    progress: UnitTracker,
) -> None:
    """Takes one message from a worker: progress, a task's counters or its failure (then gives
    it the next task), or the exception that stops the run (`STOPS`, raised here)."""
    try:
        kind, index, payload = connection.recv()
    except (EOFError, OSError):
        raise _lost(worker, "without its task's result") from None
    if kind == "progress":
        progress.update(index, payload)
    elif kind == "stop":
        error, remote, label = payload
        raise error from WorkerTraceback(f"{label}:\n{remote}")
    else:
        if kind == "failed":
            failures[index] = payload
        else:
            stats[index] = payload
        if todo:
            _give(connection, worker, todo.pop(0))


class WorkerLost(Exception):
    """A worker process ended, or could not be started, without its task's result (killed, out
    of memory, failing in its own start-up): the run cannot go on. Not an OSError, though its
    pipe raised one: that is not the disk's (`STOPS`)."""


def _give(connection: Connection, worker: BaseProcess, task: tuple[int, Task]) -> None:
    try:
        connection.send(task)
    except OSError:  # its end of the pipe is closed: the worker is gone
        raise _lost(worker, "before it took its task") from None


def _lost(worker: BaseProcess, when: str) -> WorkerLost:
    worker.join(timeout=10)  # its pipe is closed: it has ended or is ending (bounded all the same)
    status = "unknown" if worker.exitcode is None else worker.exitcode
    return WorkerLost(f"a worker process ended {when} (exit status {status})")


def _end(workers: dict[Connection, BaseProcess]) -> None:
    # Idle workers would also end when their pipe closes; busy ones must be stopped.
    for connection, worker in workers.items():
        connection.close()
        worker.terminate()
    for worker in workers.values():
        worker.join()


class WorkerTraceback(Exception):
    """The traceback of an exception raised in a worker process, as its text (the cause of the
    exception raised again in the parent)."""


class _ParentGone(BaseException):
    """The parent process is gone: the worker ends quietly. A BaseException, so that no
    `except Exception` in the simulation takes it for a failure of the unit."""


def _work(
    connection: Connection, data: dict[int, dict[str, Any]], report: bool, trace: bool, parts: str
) -> None:
    """A worker: runs the tasks it is sent until its pipe closes (module level, so a worker
    finds it by name). A task's failure goes back as text (its exception may not pickle), one
    that stops the run as itself (the parent raises it; the worker is done)."""
    # Blocked already, unless a forkserver its host started earlier without the mask forked it.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    _exit_when_orphaned()
    scenarios: dict[int, Scenario] = {}
    try:
        while True:
            try:
                index, task = connection.recv()
            except EOFError:
                return
            reporter = _reporter(connection, index) if report else None
            try:
                point = task.unit.point
                if point not in scenarios:
                    scenarios[point] = Scenario.model_validate(data[point])
                stats = tasks.run_task(scenarios[point], task, Path(parts), trace, reporter)
            except STOPS as error:
                _send(connection, ("stop", index, (error, traceback.format_exc(), task.label)))
                return
            except Exception as error:
                _send(connection, ("failed", index, failure_of(task, error)))
                continue
            _send(connection, ("result", index, stats))
    except _ParentGone:
        return


def _exit_when_orphaned() -> None:
    """Ends this process the moment its parent's sentinel says the parent is gone (a worker in
    the middle of a unit may not send anything for a long time)."""
    parent = multiprocessing.parent_process()
    if parent is None or parent.sentinel is None:
        return
    sentinel = parent.sentinel

    def watch() -> None:
        wait([sentinel])
        os._exit(0)  # nothing of a worker's needs cleaning up: its results die with the parent

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _send(connection: Connection, message: tuple[str, int, Any]) -> None:
    try:
        connection.send(message)
    except (BrokenPipeError, ConnectionResetError):
        raise _ParentGone from None


def _reporter(connection: Connection, index: int) -> Callable[[int], None]:
    return lambda finished: _send(connection, ("progress", index, finished))
