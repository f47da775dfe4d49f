"""Serial and parallel runs write the same Parquet row tables, byte for byte."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from tests.golden.regenerate import golden_scenario
from tests.helpers.golden_runs import GOLDEN, write
from toolturn.engine.runner import run_scenario, units_of
from toolturn.metrics.schema import TABLES
from toolturn.scenario.loader import load_scenario, with_overrides


def test_jobs_2_gives_the_same_files_as_a_serial_run(tmp_path: Path) -> None:
    scenario = load_scenario(GOLDEN / "open_sweep.toml")
    assert len(units_of(scenario)) == 4  # two policies at two load levels
    reports: list[tuple[int, int]] = []
    serial = run_scenario(scenario)
    parallel = run_scenario(
        scenario, jobs=2, progress=lambda unit, done: reports.append((unit, done))
    )
    write(serial, tmp_path / "serial")
    write(parallel, tmp_path / "parallel")
    for spec in TABLES:
        name = f"{spec.name}.parquet"
        serial_bytes = (tmp_path / "serial" / name).read_bytes()
        assert serial_bytes == (tmp_path / "parallel" / name).read_bytes()
    summaries = [
        pq.read_table(tmp_path / run / "summary.parquet").to_pylist()
        for run in ("serial", "parallel")
    ]
    exact = [[row for row in rows if not row["wall_clock"]] for rows in summaries]
    assert exact[0] == exact[1]
    assert len(summaries[0]) == len(summaries[1])
    # Progress came back from the workers, for every unit.
    assert {unit for unit, _ in reports} == {0, 1, 2, 3}


def test_session_faults_give_the_same_files_serial_or_parallel(tmp_path: Path) -> None:
    # Crashes, rewinds and compaction draw from their own keyed streams: a worker process
    # running one policy draws what the serial run draws.
    scenario = with_overrides(golden_scenario("resume_storm"), sessions=6)
    write(run_scenario(scenario), tmp_path / "serial")
    write(run_scenario(scenario, jobs=2), tmp_path / "parallel")
    for spec in TABLES:
        name = f"{spec.name}.parquet"
        assert (tmp_path / "serial" / name).read_bytes() == (
            tmp_path / "parallel" / name
        ).read_bytes(), name
    assert pq.read_table(tmp_path / "serial" / "repairs.parquet").num_rows > 0
