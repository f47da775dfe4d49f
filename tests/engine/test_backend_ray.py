"""The Ray backend (toolturn/engine/backends/ray.py) on a real local Ray (`ray.init()`): the
same tables as a serial run, and progress per session. Skipped unless ray is installed: `make
test-ray` installs the ray extra and runs this file (its wheel is large, so it is not part of
`make test`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolturn.engine.runner import run_scenario
from toolturn.scenario.loader import load_scenario

pytest.importorskip("ray")

GOLDEN = Path(__file__).parents[1] / "golden"


def test_ray_gives_the_tables_of_a_serial_run() -> None:
    scenario = load_scenario(GOLDEN / "open_sweep.toml")
    reports: list[tuple[int, int]] = []
    on_ray = run_scenario(
        scenario, backend="ray", jobs=2, progress=lambda u, n: reports.append((u, n))
    )
    assert on_ray.tables("r") == run_scenario(scenario).tables("r")
    # Each unit's 12 sessions at the end, and its first session as it finished (through the
    # run's queue actor): progress per session, not per task.
    assert {unit: done for unit, done in reports} == {unit: 12 for unit in range(4)}
    assert all((unit, 1) in reports for unit in range(4)), reports
