"""Tasks that fail on purpose, in this process and in the local backend's spawned workers.

`run_task` here fails the tasks of units 1 and 2 with a ValueError (a task's failure: the run
goes on). A spawned worker imports the engine afresh, so a test's monkeypatch of `run_task` does
not reach it: the test patches `_work` of `toolturn.engine.backends.local` with `work` instead,
which a worker imports by name (the target is pickled by reference) and which patches
`run_task` there before it works.
`stopping_run_task` and `work_stopping` fail unit 1 with an OSError (a failure that stops the
run); `work_dying` is a worker that dies in its start-up, before it reads a task."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from toolturn.engine import task as tasks
from toolturn.engine.backends import local
from toolturn.engine.plan import Task
from toolturn.engine.task import TaskStats
from toolturn.scenario.schema import Scenario

FAILING_UNITS = (1, 2)
_real_run_task = tasks.run_task


def run_task(scenario: Scenario, task: Task, parts: Path, *args: Any) -> TaskStats:
    if task.unit_index in FAILING_UNITS:
        raise ValueError("a broken unit")
    return _real_run_task(scenario, task, parts, *args)


def stopping_run_task(
    scenario: Scenario, task: Task, parts: Path, *args: Any
) -> TaskStats:
    if task.unit_index == 1:
        raise OSError(28, "No space left on device")
    return _real_run_task(scenario, task, parts, *args)


def work(*args: Any) -> None:
    tasks.run_task = run_task  # this worker's own module: the patch ends with the process
    local._work(*args)


def work_stopping(*args: Any) -> None:
    tasks.run_task = stopping_run_task
    local._work(*args)


def work_dying(*args: Any) -> None:
    os._exit(3)  # as a worker killed (or failing to import) before its first task
