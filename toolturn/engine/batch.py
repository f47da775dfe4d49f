"""What a backend is given to run: the tasks of a run still to run, the scenarios of their
points, and where their counters, failures and progress go. Every backend (`toolturn.engine.
backends`: the local pool, Dask and Ray) takes one and fills `stats` and `failures`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolturn.engine.plan import Task
from toolturn.engine.task import TaskFailure, TaskStats, scenario_data
from toolturn.engine.unit_progress import UnitTracker
from toolturn.scenario.schema import Scenario

__all__ = ["Batch"]


@dataclass(slots=True)
class Batch:
    """The tasks `todo` (each with its index in the run), by point `scenarios`; with `trace`,
    each writes its event trace too, into `parts`."""

    scenarios: dict[int, Scenario]
    todo: list[tuple[int, Task]]
    progress: UnitTracker
    trace: bool
    parts: Path
    # Filled as the tasks end: a finished task's counters, a failed one's failure, by index.
    stats: dict[int, TaskStats]
    failures: dict[int, TaskFailure]

    def scenario_data(self) -> dict[int, dict[str, Any]]:
        """The scenarios as the data a worker validates again (they do not pickle)."""
        return {index: scenario_data(scenario) for index, scenario in self.scenarios.items()}
