"""Every simulation of a run: the run's plan (`toolturn.engine.plan`) run on a backend
(`toolturn.engine.backends`), serially in this process or in worker processes or on a cluster,
each task writing its rows as it goes into part files (`toolturn.engine.task`).

The units are ordered load level by load level, then profile by profile, then policy by policy,
as the scenario lists them. A unit whose sessions are independent (`toolturn.engine.blocks`) runs as
blocks of sessions, the run's *tasks*; every other unit is one task. Each task writes its rows,
session by session, into its own folder under the run's parts folder (`toolturn.metrics.parts`), so
memory holds the sessions in flight, never the run; `toolturn.metrics.writer.write_run_from_parts`
makes the run folder from them. A task is a pure function of the scenario, the unit and the
block, and the run's tables are its tasks' parts in the tables' order (`parts_in_order`), so the
Parquet tables are the same bytes serially or in parallel. Only the wall-clock speed differs.
With `trace=True` every task also writes its event trace (the `events` table).

A parts folder that holds a task's finished parts already (an interrupted run's, given again)
is kept: the task is not run again. A task that fails does not stop the run: every other task
still runs (its parts kept, for `--resume`), then `TasksFailed` names each failed task (its
unit, point and block) with its error, the same on every backend; some failures end the run at
once instead (`toolturn.engine.task.STOPS`).

    result = run_scenario(load_scenario("scenarios/default.toml"), jobs=2)
    tables = result.tables("run-1")
"""

from __future__ import annotations

import json
import shutil
import tempfile
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from toolturn.engine import task as tasks_module
from toolturn.engine.backends import executor_for
from toolturn.engine.backends.cluster import run_on_executor
from toolturn.engine.backends.local import WorkerLost, run_parallel
from toolturn.engine.batch import Batch
from toolturn.engine.plan import Task, Unit, UnitProgress, has_point_columns, tasks_of, units_of
from toolturn.engine.task import STOPS, TaskFailure, TasksFailed, TaskStats, failure_of, stats_of
from toolturn.engine.unit_progress import UnitTracker
from toolturn.errors import UserError
from toolturn.experiment.points import Point, key_text, points_of
from toolturn.metrics.assemble import read_table
from toolturn.metrics.parts import is_complete, part_files
from toolturn.metrics.point_columns import point_values, with_point_columns
from toolturn.metrics.schema import EVENTS, TABLES
from toolturn.scenario.schema import Scenario

# The plan's and the tasks' names are re-exported: callers have always found them here.
__all__ = [
    "RUN_KEY_FILE", "RunResult", "Task", "TaskStats", "TasksFailed", "Unit", "UnitProgress",
    "WorkerLost", "run_scenario", "tasks_of", "units_of",
]


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
        its point's columns (none for a plain scenario), its `seed` (the point's own) and its
        unit's columns (`Unit.columns`)."""
        points = {point.index: point for point in self.points}
        ordered = []
        for task in sorted(self.tasks, key=lambda t: t.order):
            point = points[task.unit.point]
            values: dict[str, Any] = {"seed": point.scenario.seed, **task.unit.columns}
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

    def events_per_wall_s(self) -> dict[tuple[str, str, int, str], float]:
        """The harness's speed per simulation (profile, policy, load_level, protocol): stream
        events fed per wall-clock second, over the simulation's blocks."""
        totals: dict[tuple[str, str, int, str], list[float]] = {}
        for task, stats in zip(self.tasks, self.stats, strict=True):
            unit = task.unit
            key = (unit.profile, unit.policy, unit.load_level, unit.protocol)
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
        index: stats_of(folder / task.name)
        for index, task in enumerate(tasks)
        if is_complete(folder / task.name)
    }
    todo = [(index, task) for index, task in enumerate(tasks) if index not in stats]
    tracker = UnitTracker(progress, tasks, stats, scenarios)
    failures: dict[int, TaskFailure] = {}
    batch = Batch(scenarios, todo, tracker, trace, folder, stats, failures)
    if backend != "local":
        with executor_for(backend, jobs=jobs, address=address) as (executor, channel):
            run_on_executor(executor, channel, batch)
    elif jobs <= 1 or len(todo) <= 1:
        _run_here(batch)
    else:
        run_parallel(batch, jobs)
    if failures:
        raise TasksFailed([failures[index] for index in sorted(failures)], len(tasks))
    return RunResult(
        scenario, units_of(scenario, points), tasks, [stats[i] for i in range(len(tasks))],
        folder, points, trace,
    )


def _run_here(batch: Batch) -> None:
    """Every task of the batch in this process, one after another."""
    for index, task in batch.todo:
        point_scenario = batch.scenarios[task.unit.point]
        try:
            batch.stats[index] = tasks_module.run_task(
                point_scenario, task, batch.parts, batch.trace, batch.progress.bind(index)
            )
        except STOPS:
            raise
        except Exception as error:
            batch.failures[index] = failure_of(task, error)


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
