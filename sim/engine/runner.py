"""Every simulation of a run: each executor policy under each recovery profile at each load
level, serially or in worker processes, merged into one `RunCollector` in a fixed order.

The units are ordered load level by load level, then profile by profile, then policy by policy,
as the scenario lists them.
With `jobs > 1` they run in worker processes (spawned, so it works the same on every platform),
each taking one unit at a time over its own pipe; each unit is a pure function of the scenario,
the policy and the level, and its rows are merged in unit order, so the Parquet tables are the
same bytes as a serial run's. Only the wall-clock speed differs. With `trace=True` every unit
also keeps its event trace, and the collector has the `events` table (the same bytes serially or
in parallel too).

A Ctrl-C reaches the whole process group, but only the parent acts on it: workers start with
SIGINT blocked and never see it. When the parent is interrupted (or a unit fails) it terminates
its workers before the exception goes on, so the run ends promptly, without workers' tracebacks
or workers left behind. The parent alone reads the pipes, in its main thread (no pool thread a
half-sent result could leave waiting forever, as with `concurrent.futures`). A worker whose
parent is gone (killed by SIGKILL, which no handler sees) exits at once and quietly: it watches
its parent's sentinel, and a message it can no longer send ends it rather than raising.

    result = run_scenario(load_scenario("scenarios/default.toml"), jobs=2)
    tables = result.collector("run-1").tables()
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing import resource_tracker
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any

from sim.engine.arrivals import load_levels
from sim.engine.recorder import TABLE_NAMES
from sim.engine.simulation import SimulationResult, simulate
from sim.metrics.collector import RunCollector
from sim.metrics.schema import EVENTS
from sim.scenario.schema import Scenario


@dataclass(frozen=True, slots=True)
class Unit:
    """One simulation of a run."""

    policy: str
    load: float | None
    # The level's position in the sweep (0 without a sweep): the `load_level` of its rows.
    load_level: int = 0
    profile: str = "default"

    @property
    def label(self) -> str:
        arm = self.policy if self.profile == "default" else f"{self.policy} [{self.profile}]"
        return arm if self.load is None else f"{arm} @ {self.load:g}"


# Called with (unit index, sessions finished in that unit).
UnitProgress = Callable[[int, int], None]


def units_of(scenario: Scenario) -> list[Unit]:
    """The run's simulations in their fixed order: by load level, then profile, then policy."""
    return [
        Unit(policy, level, index, profile)
        for index, level in enumerate(load_levels(scenario.load))
        for profile in scenario.runtime.profiles
        for policy in scenario.runtime.policies
    ]


@dataclass(slots=True)
class RunResult:
    scenario: Scenario
    units: list[Unit]
    results: list[SimulationResult]
    # Whether the units were traced (then the collector has the `events` table).
    trace: bool = False

    def collector(self, run_id: str) -> RunCollector:
        """Every unit's rows in one collector, added in unit order."""
        scenario = self.scenario
        collector = RunCollector(
            run_id=run_id, scenario=scenario.name, seed=scenario.seed, trace=self.trace
        )
        for result in self.results:
            for name in TABLE_NAMES:
                for row in result.rows[name]:
                    collector.add(name, row)
            if self.trace:
                assert result.trace is not None, "a traced run's units are traced"
                columns = result.trace.columns(
                    result.policy, result.load, result.load_level, result.profile
                )
                collector.add_columns(EVENTS.name, columns)
        return collector

    def events_per_wall_s(self) -> dict[tuple[str, str, int], float]:
        """The harness's speed per simulation (profile, policy, load_level): stream events fed
        per wall-clock second."""
        return {
            (result.profile, result.policy, result.load_level): result.events_per_wall_s
            for result in self.results
        }

    @property
    def pairing_violations(self) -> int:
        return sum(result.pairing_violations for result in self.results)


def run_scenario(
    scenario: Scenario,
    *,
    jobs: int = 1,
    progress: UnitProgress | None = None,
    trace: bool = False,
) -> RunResult:
    """Run every unit of `scenario`; `jobs` worker processes (1: in this process); with `trace`,
    keep every unit's event trace."""
    units = units_of(scenario)
    if jobs <= 1 or len(units) == 1:
        results = [
            simulate(
                scenario,
                unit.policy,
                unit.load,
                progress=_bind(progress, index),
                trace=trace,
                load_level=unit.load_level,
                profile=unit.profile,
            )
            for index, unit in enumerate(units)
        ]
    else:
        results = _run_parallel(scenario, units, jobs, progress, trace)
    return RunResult(scenario, units, results, trace)


def _bind(progress: UnitProgress | None, index: int) -> Callable[[int], None] | None:
    if progress is None:
        return None
    return lambda finished: progress(index, finished)


def _run_parallel(
    scenario: Scenario,
    units: Sequence[Unit],
    jobs: int,
    progress: UnitProgress | None,
    trace: bool,
) -> list[SimulationResult]:
    context = multiprocessing.get_context("spawn")
    # A Scenario holds compiled JSON-schema validators, which do not pickle: workers get the
    # validated data and validate it again.
    data = scenario.model_dump(mode="python", exclude_unset=True)
    todo = list(enumerate(units))
    results: dict[int, SimulationResult] = {}
    workers: dict[Connection, BaseProcess] = {}
    # Started now, not by the first worker's start: starting it unblocks SIGINT (bpo-33613's
    # mask, lifted after the tracker is spawned), and the first worker started in that call
    # would see a Ctrl-C (a KeyboardInterrupt traceback from its imports).
    resource_tracker.ensure_running()
    try:
        for _ in range(min(jobs, len(units))):
            ours, theirs = context.Pipe()
            worker = context.Process(
                target=_work, args=(theirs, data, progress is not None, trace), daemon=True
            )
            with _sigint_blocked():
                worker.start()
            theirs.close()
            workers[ours] = worker
            ours.send(todo.pop(0))
        while len(results) < len(units):
            for connection in wait(list(workers)):
                assert isinstance(connection, Connection)
                _receive(connection, workers[connection], units, todo, results, progress)
    finally:
        _end(workers)
    return [results[index] for index in range(len(units))]


def _receive(
    connection: Connection,
    worker: BaseProcess,
    units: Sequence[Unit],
    todo: list[tuple[int, Unit]],
    results: dict[int, SimulationResult],
    progress: UnitProgress | None,
) -> None:
    """Takes one message from a worker: progress, a result (then gives it the next unit), or
    the exception its unit raised (raised here)."""
    try:
        kind, index, payload = connection.recv()
    except EOFError:
        worker.join()
        raise RuntimeError(
            f"a worker process ended without its result (exit status {worker.exitcode})"
        ) from None
    if kind == "progress":
        assert progress is not None
        progress(index, payload)
    elif kind == "error":
        error, remote = payload
        raise error from WorkerTraceback(f"{units[index].label}:\n{remote}")
    else:
        results[index] = payload
        if todo:
            connection.send(todo.pop(0))


def _end(workers: dict[Connection, BaseProcess]) -> None:
    # Idle workers would also end when their pipe closes; busy ones must be stopped.
    for connection, worker in workers.items():
        connection.close()
        worker.terminate()
    for worker in workers.values():
        worker.join()


@contextmanager
def _sigint_blocked() -> Iterator[None]:
    """SIGINT blocked in this thread while it starts a process, which inherits the mask (through
    fork and exec) and keeps it. A SIGINT meanwhile is not lost: it waits until the block ends
    (or goes to another thread of this process)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


class WorkerTraceback(Exception):
    """The traceback of an exception raised in a worker process, as its text (the cause of the
    exception raised again in the parent)."""


class _ParentGone(BaseException):
    """The parent process is gone: the worker ends quietly. A BaseException, so that no
    `except Exception` in the simulation takes it for a failure of the unit."""


def _work(connection: Connection, data: dict[str, Any], report: bool, trace: bool) -> None:
    """A worker: runs the units it is sent until its pipe closes (module level, so spawned
    processes can import it)."""
    _exit_when_orphaned()
    scenario = Scenario.model_validate(data)
    try:
        while True:
            try:
                index, unit = connection.recv()
            except EOFError:
                return
            reporter = _reporter(connection, index) if report else None
            try:
                result = simulate(
                    scenario,
                    unit.policy,
                    unit.load,
                    progress=reporter,
                    trace=trace,
                    load_level=unit.load_level,
                    profile=unit.profile,
                )
            except Exception as error:
                _send(connection, ("error", index, (error, traceback.format_exc())))
                return
            _send(connection, ("result", index, result))
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
