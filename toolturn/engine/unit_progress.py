"""Sessions finished per unit of a run, summed over its tasks (blocks), reported to the run's
progress callback (`toolturn.engine.plan.UnitProgress`) as they change, on every backend."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from toolturn.engine.plan import Task, UnitProgress
from toolturn.engine.task import TaskStats
from toolturn.scenario.schema import Scenario

__all__ = ["UnitTracker"]


class UnitTracker:
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


