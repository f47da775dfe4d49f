"""Serial and parallel runs write the same Parquet row tables, byte for byte."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from sim.engine.runner import RunResult, run_scenario, units_of
from sim.metrics.schema import TABLES
from sim.metrics.writer import RunMetadata, write_run
from sim.scenario.loader import load_scenario

GOLDEN = Path(__file__).parent / "golden"


def write(result: RunResult, out: Path) -> None:
    metadata = RunMetadata.collect(
        run_id="same-run", scenario=result.scenario.name, scenario_sha256="0" * 64,
        seed=result.scenario.seed,
    )
    write_run(
        out, result.tables("same-run"), metadata,
        events_per_wall_s=result.events_per_wall_s(),
    )


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
