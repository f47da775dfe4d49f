"""Every simulation of a run: each executor policy under each recovery profile at each load
level, serially or in worker processes, each writing its rows as it goes into part files.

The units are ordered load level by load level, then profile by profile, then policy by policy,
as the scenario lists them. A unit whose sessions are independent (`toolturn.engine.blocks`) runs as
blocks of sessions, the run's *tasks*; every other unit is one task. Each task writes its rows,
session by session, into its own folder under the run's parts folder (`toolturn.metrics.parts`), so
memory holds the sessions in flight, never the run; `toolturn.metrics.writer.write_run_from_parts`
makes the run folder from them. A task is a pure function of the scenario, the unit and the
block, and the run's tables are its tasks' parts in the tables' order (`parts_in_order`), so the
Parquet tables are the same bytes serially or in parallel. Only the wall-clock speed differs.
With `trace=True` every task also writes its event trace (the `events` table).

With `jobs > 1` the tasks run in worker processes, each taking one task at a time over its own
pipe; a worker sends back only the task's counters (its rows are in its parts). A parts folder
that holds a task's finished parts already (an interrupted run's, given again) is kept: the task
is not run again.

The workers are forks of multiprocessing's forkserver with the engine preloaded (`PRELOAD`;
`toolturn.engine.forking` says why that start method): ready in milliseconds where a spawned worker
spent about 1.3 s importing the engine again, and never seeing a Ctrl-C.

A task that fails does not stop the run: every other task still runs (its parts kept, for
`--resume`), then `TasksFailed` names each failed task (its unit, point and block) with its
error, the same on every backend. Some failures end the run at once instead (`STOPS`): strict
mode's stop (its purpose: the first broken transcript, with what reproduces it), a `UserError`
(the scenario's fault, such as a runaway session: reported as bad input) and an `OSError` (the
disk or the parts folder, which every other task would meet too).

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

    result = run_scenario(load_scenario("scenarios/default.toml"), jobs=2)
    tables = result.tables("run-1")
"""

from __future__ import annotations

import concurrent.futures
import json
import multiprocessing
import os
import shutil
import signal
import tempfile
import threading
import traceback
import weakref
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

import pyarrow as pa

from toolturn.engine.arrivals import load_levels
from toolturn.engine.backends import REPORT_EVERY_S, Channel, Reporter, executor_for
from toolturn.engine.blocks import session_blocks
from toolturn.engine.forking import sigint_blocked, worker_context
from toolturn.engine.simulation import simulate
from toolturn.engine.strict import StrictModeStop
from toolturn.errors import UserError
from toolturn.experiment.points import Point, key_text, points_of
from toolturn.metrics.assemble import read_table
from toolturn.metrics.parts import DONE_FILE, UnitParts, is_complete, part_files
from toolturn.metrics.point_columns import point_values, with_point_columns
from toolturn.metrics.schema import EVENTS, TABLES
from toolturn.scenario.schema import Scenario


@dataclass(frozen=True, slots=True)
class Unit:
    """One simulation of a run."""

    policy: str
    load: float | None
    # The level's position in the sweep (0 without a sweep): the `load_level` of its rows.
    load_level: int = 0
    profile: str = "default"
    # The experiment point it simulates (`Point.index`) and how people read it ("" for a plain
    # scenario's one point).
    point: int = 0
    point_label: str = ""

    @property
    def label(self) -> str:
        arm = self.policy if self.profile == "default" else f"{self.policy} [{self.profile}]"
        arm = arm if self.load is None else f"{arm} @ {self.load:g}"
        return f"{arm} ({self.point_label})" if self.point_label else arm


@dataclass(frozen=True, slots=True)
class Task:
    """What one process runs at a time: a unit (its index in the run), whole or one block."""

    unit_index: int
    unit: Unit
    block: range | None = None

    @property
    def name(self) -> str:
        """Its parts folder's name: the tables' order (profile, policy, level, block) spelt out
        (`parts_in_order` sorts by the fields, not by this)."""
        first = 0 if self.block is None else self.block.start
        unit = self.unit
        return f"point{unit.point}.{unit.profile}.{unit.policy}.level{unit.load_level}.from{first}"

    @property
    def label(self) -> str:
        """How people read it: its unit's label, and its sessions when it is one block."""
        block = self.block
        return self.unit.label if block is None else (
            f"{self.unit.label}, sessions {block.start}-{block.stop - 1}"
        )

    @property
    def order(self) -> tuple[int, str, str, int, int]:
        """Where its rows go in the run's tables: by their sort key (point, profile, policy,
        level, session id)."""
        first = 0 if self.block is None else self.block.start
        unit = self.unit
        return (unit.point, unit.profile, unit.policy, unit.load_level, first)


@dataclass(frozen=True, slots=True)
class TaskStats:
    """What a task sends back (its rows are in its parts folder)."""

    sessions_finished: int
    # Stream events fed to the runtime, and the wall-clock seconds the task took.
    events: int
    wall_s: float
    pairing_violations: int


# Called with (unit index, sessions finished in that unit).
UnitProgress = Callable[[int, int], None]

# A task's failures that end the run at once rather than being that task's alone (module
# docstring).
STOPS = (StrictModeStop, UserError, OSError)


@dataclass(frozen=True, slots=True)
class TaskFailure:
    """A task that raised: which one (`Task.label`), its error in one line and its traceback."""

    label: str
    error: str
    traceback: str


def failure_of(task: Task, error: BaseException) -> TaskFailure:
    return TaskFailure(
        task.label, f"{type(error).__name__}: {error}",
        "".join(traceback.format_exception(error)),
    )


class TasksFailed(Exception):
    """Tasks of a run failed; every other task finished, its parts kept."""

    def __init__(self, failures: Sequence[TaskFailure], tasks: int) -> None:
        super().__init__(f"{len(failures)} of {tasks} tasks failed: " + "; ".join(
            f"{failure.label}: {failure.error}" for failure in failures
        ))
        self.failures = list(failures)
        self.tasks = tasks


def units_of(scenario: Scenario, points: Sequence[Point] | None = None) -> list[Unit]:
    """The run's simulations in their fixed order: point by point (`points`, by default the
    scenario's), then by load level, then profile, then policy of the point's scenario."""
    return [
        Unit(policy, level, index, profile, point.index, _point_label(point))
        for point in (points_of(scenario) if points is None else points)
        for index, level in enumerate(load_levels(point.scenario.load))
        for profile in point.scenario.runtime.profiles
        for policy in point.scenario.runtime.policies
    ]


def _point_label(point: Point) -> str:
    if not point.key and point.replication == 0:
        return ""
    settings = ", ".join(f"{path}={value}" for path, value in point.key)
    return f"{settings}, replication {point.replication}" if settings else (
        f"replication {point.replication}"
    )


def tasks_of(scenario: Scenario, points: Sequence[Point] | None = None) -> list[Task]:
    """The run's tasks: each unit in order, by its blocks (`toolturn.engine.blocks`)."""
    points = points_of(scenario) if points is None else list(points)
    blocks = {point.index: session_blocks(point.scenario) for point in points}
    return [
        Task(index, unit, block)
        for index, unit in enumerate(units_of(scenario, points))
        for block in blocks[unit.point]
    ]


def has_point_columns(points: Sequence[Point]) -> bool:
    """Whether the run's tables carry the point columns (`toolturn.metrics.point_columns`): a run of
    more than one point, or of a point with settings."""
    return len(points) > 1 or any(point.key for point in points)


@dataclass(slots=True, weakref_slot=True)
class RunResult:
    scenario: Scenario
    units: list[Unit]
    tasks: list[Task]
    stats: list[TaskStats]
    # The folder holding a folder of part files per task (`Task.name`).
    parts: Path
    points: list[Point]
    # Whether the tasks were traced (then the parts have the `events` table).
    trace: bool = False

    @property
    def has_point_columns(self) -> bool:
        return has_point_columns(self.points)

    def point_columns(self) -> list[tuple[int, int, str]] | None:
        """The (point, replication, point_key) of every point, in point order, when the tables
        have point columns (none for a plain scenario)."""
        if not self.has_point_columns:
            return None
        return [(point.index, point.replication, key_text(point)) for point in self.points]

    def parts_in_order(self) -> list[tuple[Path, dict[str, Any]]]:
        """The tasks' parts folders in the order of the run's tables, each with the values of
        its point's columns (none for a plain scenario) and its `seed` (the point's own)."""
        points = {point.index: point for point in self.points}
        ordered = []
        for task in sorted(self.tasks, key=lambda t: t.order):
            point = points[task.unit.point]
            values: dict[str, Any] = {"seed": point.scenario.seed}
            if self.has_point_columns:
                values.update(point_values(point.index, point.replication, key_text(point)))
            ordered.append((self.parts / task.name, values))
        return ordered

    def tables(self, run_id: str) -> dict[str, pa.Table]:
        """Every table of the run in memory (`events` last, with a trace), as written to its
        folder: for callers that want the tables themselves, not for a large run."""
        scenario = self.scenario
        run_wide = {"run_id": run_id, "scenario": scenario.name, "seed": scenario.seed}
        specs = (*TABLES, EVENTS) if self.trace else TABLES
        if self.has_point_columns:
            specs = tuple(with_point_columns(spec) for spec in specs)
        return {
            spec.name: read_table(
                spec,
                [
                    (part, {**run_wide, **values})
                    for folder, values in self.parts_in_order()
                    for part in part_files(folder, spec.name)
                ],
            )
            for spec in specs
        }

    def events_per_wall_s(self) -> dict[tuple[str, str, int], float]:
        """The harness's speed per simulation (profile, policy, load_level): stream events fed
        per wall-clock second, over the simulation's blocks."""
        totals: dict[tuple[str, str, int], list[float]] = {}
        for task, stats in zip(self.tasks, self.stats, strict=True):
            key = (task.unit.profile, task.unit.policy, task.unit.load_level)
            total = totals.setdefault(key, [0.0, 0.0])
            total[0] += stats.events
            total[1] += stats.wall_s
        return {key: events / wall if wall > 0 else 0.0 for key, (events, wall) in totals.items()}

    @property
    def pairing_violations(self) -> int:
        return sum(stats.pairing_violations for stats in self.stats)


def run_scenario(
    scenario: Scenario,
    *,
    jobs: int = 1,
    progress: UnitProgress | None = None,
    trace: bool = False,
    parts: Path | None = None,
    points: Sequence[Point] | None = None,
    backend: str = "local",
    address: str | None = None,
) -> RunResult:
    """Run every task of `scenario`'s `points` (by default `points_of(scenario)`), writing its
    parts under `parts` (created; a temporary folder, removed with the result, when None);
    `jobs` worker processes (1: in this process) on `backend` (`toolturn.engine.backends`: `local`,
    or `dask`/`ray` with `jobs` workers of a cluster made here, or the cluster at `address`);
    with `trace`, keep every task's event trace. Tasks whose parts are there already are not
    run again."""
    points = points_of(scenario) if points is None else list(points)
    if parts is None:
        folder = Path(tempfile.mkdtemp(prefix="sim-parts-"))
    else:
        folder = Path(parts)
        folder.mkdir(parents=True, exist_ok=True)
    try:
        result = _run_tasks(scenario, points, folder, jobs, progress, trace, backend, address)
    except BaseException:
        if parts is None:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    if parts is None:
        weakref.finalize(result, shutil.rmtree, folder, True)
    return result


def _run_tasks(
    scenario: Scenario,
    points: list[Point],
    folder: Path,
    jobs: int,
    progress: UnitProgress | None,
    trace: bool,
    backend: str,
    address: str | None,
) -> RunResult:
    scenarios = {point.index: point.scenario for point in points}
    _claim(folder, list(scenarios.values()), trace)
    tasks = tasks_of(scenario, points)
    stats: dict[int, TaskStats] = {
        index: _stats_of(folder / task.name)
        for index, task in enumerate(tasks)
        if is_complete(folder / task.name)
    }
    todo = [(index, task) for index, task in enumerate(tasks) if index not in stats]
    tracker = _UnitProgress(progress, tasks, stats, scenarios)
    failures: dict[int, TaskFailure] = {}
    if backend != "local":
        with executor_for(backend, jobs=jobs, address=address) as (executor, channel):
            _run_on_executor(
                executor, channel, scenarios, todo, tracker, trace, folder, stats, failures
            )
    elif jobs <= 1 or len(todo) <= 1:
        for index, task in todo:
            point_scenario = scenarios[task.unit.point]
            try:
                stats[index] = run_task(point_scenario, task, folder, trace, tracker.bind(index))
            except STOPS:
                raise
            except Exception as error:
                failures[index] = failure_of(task, error)
    else:
        _run_parallel(scenarios, todo, jobs, tracker, trace, folder, stats, failures)
    if failures:
        raise TasksFailed([failures[index] for index in sorted(failures)], len(tasks))
    return RunResult(
        scenario, units_of(scenario, points), tasks, [stats[i] for i in range(len(tasks))],
        folder, points, trace,
    )


# In a parts folder: what run its parts are of (tasks of another run are never taken up).
RUN_KEY_FILE = "run-key.json"


def _claim(folder: Path, scenarios: Sequence[Scenario], trace: bool) -> None:
    """Marks `folder` as holding parts of this run (of the points' `scenarios`); raises
    UserError when it holds another's."""
    dumps = [scenario.model_dump(mode="json") for scenario in scenarios]
    key = json.dumps({"points": dumps, "trace": trace}, sort_keys=True)
    marker = folder / RUN_KEY_FILE
    if marker.is_file():
        if marker.read_text(encoding="utf-8") != key:
            raise UserError(
                f"{folder}: holds the parts of another run (another scenario, seed, override "
                "or --trace); run without --resume to start afresh"
            )
        return
    if any(folder.iterdir()):
        raise UserError(f"{folder}: not a parts folder of this program (no {RUN_KEY_FILE})")
    marker.write_text(key, encoding="utf-8")


def run_task(
    scenario: Scenario,
    task: Task,
    parts: Path,
    trace: bool,
    progress: Callable[[int], None] | None = None,
) -> TaskStats:
    """Simulates one task, its rows written into `parts / task.name` as they come; a folder
    already there (an interrupted attempt's) is written anew."""
    folder = parts / task.name
    shutil.rmtree(folder, ignore_errors=True)
    first = 0 if task.block is None else task.block.start
    writer = UnitParts(folder, trace=trace, first_session=first)
    unit = task.unit
    try:
        result = simulate(
            scenario,
            unit.policy,
            unit.load,
            progress=progress,
            trace=trace,
            load_level=unit.load_level,
            profile=unit.profile,
            sink=writer.add_session,
            sessions=task.block,
        )
        if result.trace is not None:
            writer.add_events(
                result.trace.columns(unit.policy, unit.load, unit.load_level, unit.profile)
            )
    except BaseException:
        writer.abandon()
        raise
    stats = TaskStats(
        result.sessions_finished, result.events, result.wall_s, result.pairing_violations
    )
    writer.close(json.dumps(asdict(stats)))
    return stats


def _stats_of(folder: Path) -> TaskStats:
    return TaskStats(**json.loads((folder / DONE_FILE).read_text(encoding="utf-8")))


class _UnitProgress:
    """Sessions finished per unit, summed over its tasks (blocks), reported as they change."""

    def __init__(
        self,
        progress: UnitProgress | None,
        tasks: Sequence[Task],
        done: dict[int, TaskStats],
        scenarios: dict[int, Scenario],
    ) -> None:
        self._progress = progress
        self._tasks = tasks
        self._finished = [0] * len(tasks)
        for index in done:
            block = tasks[index].block
            sessions = scenarios[tasks[index].unit.point].load.sessions
            self._finished[index] = sessions if block is None else len(block)
        self._per_unit: dict[int, list[int]] = {}
        for index, task in enumerate(tasks):
            self._per_unit.setdefault(task.unit_index, []).append(index)
        if progress is not None:
            for unit_index in self._per_unit:
                if self._unit_total(unit_index):
                    progress(unit_index, self._unit_total(unit_index))

    @property
    def reporting(self) -> bool:
        return self._progress is not None

    def _unit_total(self, unit_index: int) -> int:
        return sum(self._finished[index] for index in self._per_unit[unit_index])

    def update(self, index: int, finished: int) -> None:
        if self._progress is None:
            return
        self._finished[index] = finished
        unit_index = self._tasks[index].unit_index
        self._progress(unit_index, self._unit_total(unit_index))

    def bind(self, index: int) -> Callable[[int], None] | None:
        if self._progress is None:
            return None
        return lambda finished: self.update(index, finished)


def _run_on_executor(
    executor: concurrent.futures.Executor,
    channel: Channel,
    scenarios: dict[int, Scenario],
    todo: list[tuple[int, Task]],
    progress: _UnitProgress,
    trace: bool,
    parts: Path,
    stats: dict[int, TaskStats],
    failures: dict[int, TaskFailure],
) -> None:
    """Every task of `todo` submitted to `executor` (a Dask or Ray one), its counters taken as it
    finishes, a failure into `failures`, its sessions as they finish read from `channel` in
    between. A failure that stops the run (`STOPS`) or an interrupt cancels what has not
    started."""
    data = {index: _scenario_data(scenario) for index, scenario in scenarios.items()}
    futures = {
        executor.submit(
            _remote_task, data[task.unit.point], task, str(parts), trace,
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
    progress: _UnitProgress,
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


def _scenario_data(scenario: Scenario) -> dict[str, Any]:
    # A Scenario holds compiled JSON-schema validators, which do not pickle: workers get the
    # validated data and validate it again.
    return scenario.model_dump(mode="python", exclude_unset=True)


def _remote_task(
    data: dict[str, Any], task: Task, parts: str, trace: bool, reporter: Reporter | None
) -> TaskStats:
    """One task on a cluster's worker (module level, so it pickles by reference)."""
    return run_task(Scenario.model_validate(data), task, Path(parts), trace, reporter)


# What a worker runs: imported once by the forkserver, so that its forks have it (module
# docstring). The runner imports the simulation and the part writers (pyarrow, simpy, pydantic).
PRELOAD = ["toolturn.engine.runner"]


def _run_parallel(
    scenarios: dict[int, Scenario],
    todo: list[tuple[int, Task]],
    jobs: int,
    progress: _UnitProgress,
    trace: bool,
    parts: Path,
    stats: dict[int, TaskStats],
    failures: dict[int, TaskFailure],
) -> None:
    data = {index: _scenario_data(scenario) for index, scenario in scenarios.items()}
    todo = list(todo)
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
    progress: _UnitProgress,
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
                stats = run_task(scenarios[point], task, Path(parts), trace, reporter)
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
