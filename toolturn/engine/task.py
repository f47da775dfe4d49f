"""One task of a run's plan (`toolturn.engine.plan`) simulated, its rows written into its own
parts folder as they come; what it sends back (`TaskStats`), and how its failure is told: a
failure of that task alone (`TaskFailure`, gathered into `TasksFailed`), or one that ends the
run at once (`STOPS`): strict mode's stop (its purpose: the first broken transcript, with what
reproduces it), a `UserError` (the scenario's fault, such as a runaway session: reported as
bad input) and an `OSError` (the disk or the parts folder, which every other task would meet
too). The same on every backend (`toolturn.engine.backends`)."""

from __future__ import annotations

import json
import shutil
import traceback
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from toolturn.engine.plan import Task
from toolturn.engine.simulation import simulate
from toolturn.engine.strict import StrictModeStop
from toolturn.errors import UserError
from toolturn.metrics.parts import DONE_FILE, UnitParts
from toolturn.scenario.schema import Scenario

__all__ = [
    "STOPS", "TaskFailure", "TaskStats", "TasksFailed", "failure_of", "remote_task", "run_task",
    "scenario_data", "stats_of",
]


@dataclass(frozen=True, slots=True)
class TaskStats:
    """What a task sends back (its rows are in its parts folder)."""

    sessions_finished: int
    # Stream events fed to the runtime, and the wall-clock seconds the task took.
    events: int
    wall_s: float
    pairing_violations: int


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
            protocol=unit.protocol,
        )
        if result.trace is not None:
            writer.add_events(result.trace.columns())
    except BaseException:
        writer.abandon()
        raise
    stats = TaskStats(
        result.sessions_finished, result.events, result.wall_s, result.pairing_violations
    )
    writer.close(json.dumps(asdict(stats)))
    return stats


def stats_of(folder: Path) -> TaskStats:
    return TaskStats(**json.loads((folder / DONE_FILE).read_text(encoding="utf-8")))


def scenario_data(scenario: Scenario) -> dict[str, Any]:
    # A Scenario holds compiled JSON-schema validators, which do not pickle: workers get the
    # validated data and validate it again.
    return scenario.model_dump(mode="python", exclude_unset=True)


def remote_task(
    data: dict[str, Any], task: Task, parts: str, trace: bool,
    reporter: Callable[[int], None] | None,
) -> TaskStats:
    """One task on a cluster's worker (module level, so it pickles by reference)."""
    return run_task(Scenario.model_validate(data), task, Path(parts), trace, reporter)


