"""The Ray backend (sim/engine/backends.py) on a real local Ray (`ray.init()`): the same tables as
a serial run. Skipped unless ray is installed: `make test-ray` installs the ray extra and runs
this file (its wheel is large, so it is not part of `make test`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.engine.runner import run_scenario
from sim.scenario.loader import load_scenario

pytest.importorskip("ray")

GOLDEN = Path(__file__).parent / "golden"


def test_ray_gives_the_tables_of_a_serial_run() -> None:
    scenario = load_scenario(GOLDEN / "open_sweep.toml")
    on_ray = run_scenario(scenario, backend="ray", jobs=2)
    assert on_ray.tables("r") == run_scenario(scenario).tables("r")
