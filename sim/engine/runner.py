"""Every simulation of a run: each executor policy at each load level, serially or in worker
processes, merged into one `RunCollector` in a fixed order.

The units are ordered load level by load level, policy by policy, as the scenario lists them.
With `jobs > 1` they run in a `concurrent.futures` process pool (spawned workers, so it works the
same on every platform); each unit is a pure function of the scenario, the policy and the level,
and its rows are merged in unit order, so the Parquet tables are the same bytes as a serial run's.
Only the wall-clock speed differs. With `trace=True` every unit also keeps its event trace, and
the collector has the `events` table (the same bytes serially or in parallel too).

    result = run_scenario(load_scenario("scenarios/default.toml"), jobs=2)
    tables = result.collector("run-1").tables()
"""

from __future__ import annotations

import multiprocessing
import queue
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from sim.engine.arrivals import load_levels
from sim.engine.recorder import TABLE_NAMES
from sim.engine.simulation import SimulationResult, simulate
from sim.metrics.collector import RunCollector
from sim.metrics.schema import EVENTS
from sim.scenario.schema import Scenario

# How often (seconds) the parent looks at progress reports while workers run.
_POLL_S = 0.1


@dataclass(frozen=True, slots=True)
class Unit:
    """One simulation of a run."""

    policy: str
    load: float | None

    @property
    def label(self) -> str:
        return self.policy if self.load is None else f"{self.policy} @ {self.load:g}"


# Called with (unit index, sessions finished in that unit).
UnitProgress = Callable[[int, int], None]


def units_of(scenario: Scenario) -> list[Unit]:
    """The run's simulations in their fixed order: by load level, then by policy."""
    return [
        Unit(policy, level)
        for level in load_levels(scenario.load)
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
                collector.add_columns(EVENTS.name, result.trace.columns(result.policy, result.load))
        return collector

    def events_per_wall_s(self) -> dict[str, float]:
        """The harness's speed per policy: stream events fed per wall-clock second, over all its
        load levels."""
        events: dict[str, int] = {}
        seconds: dict[str, float] = {}
        for result in self.results:
            events[result.policy] = events.get(result.policy, 0) + result.events
            seconds[result.policy] = seconds.get(result.policy, 0.0) + result.wall_s
        return {p: events[p] / seconds[p] if seconds[p] > 0 else 0.0 for p in events}

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
                scenario, unit.policy, unit.load, progress=_bind(progress, index), trace=trace
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
    with context.Manager() as manager:
        reports: Any = manager.Queue() if progress is not None else None
        with ProcessPoolExecutor(max_workers=min(jobs, len(units)), mp_context=context) as pool:
            futures: list[Future[SimulationResult]] = [
                pool.submit(_run_unit, data, unit, index, reports, trace)
                for index, unit in enumerate(units)
            ]
            pending = set(futures)
            while pending:
                _, pending = wait(pending, timeout=_POLL_S, return_when=FIRST_COMPLETED)
                _drain(reports, progress)
            _drain(reports, progress)
            return [future.result() for future in futures]


def _drain(reports: Any, progress: UnitProgress | None) -> None:
    if reports is None or progress is None:
        return
    while True:
        try:
            index, finished = reports.get_nowait()
        except queue.Empty:
            return
        progress(index, finished)


def _run_unit(
    data: dict[str, Any], unit: Unit, index: int, reports: Any, trace: bool = False
) -> SimulationResult:
    """A worker's job (module level, so spawned processes can import it)."""
    scenario = Scenario.model_validate(data)
    report = None if reports is None else (lambda finished: reports.put((index, finished)))
    return simulate(scenario, unit.policy, unit.load, progress=report, trace=trace)
