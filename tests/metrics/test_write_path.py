"""One write path (issue 32, section 2): the rows of a driver that holds each unit's rows
(`toolturn live`) go to the run folder through the engine's part files, and the folder is the
bytes `write_run` writes for the same rows in memory."""

from __future__ import annotations

from pathlib import Path

from toolturn.engine.recorder import TABLE_NAMES
from toolturn.engine.runner import units_of
from toolturn.engine.simulation import simulate
from toolturn.metrics.collector import RunCollector
from toolturn.metrics.row_columns import with_constants
from toolturn.metrics.writer import (
    RUN_FILE,
    SUMMARY_FILE,
    RunMetadata,
    write_run,
    write_run_from_rows,
)
from toolturn.scenario.loader import load_scenario, with_overrides

GOLDEN = Path(__file__).parents[1] / "golden"


def test_rows_held_per_unit_write_the_folder_write_run_writes(tmp_path: Path) -> None:
    scenario = with_overrides(load_scenario(GOLDEN / "open_sweep.toml"),
                              profiles=["default", "claude-code"])
    # Units in an order other than the tables': the writer orders them.
    units = list(reversed(units_of(scenario)))
    results = [simulate(scenario, u.policy, u.load, load_level=u.load_level, profile=u.profile)
            for u in units]
    collector = RunCollector(run_id="r", scenario=scenario.name, seed=scenario.seed)
    rows = [(result.columns, result.rows) for result in results]
    for columns, unit_rows in rows:
        for name in TABLE_NAMES:
            collector.add_columns(name, with_constants(unit_rows[name], columns))
    metadata = RunMetadata(run_id="r", scenario=scenario.name, scenario_sha256="0" * 64,
                           seed=scenario.seed, versions={}, git_commit=None)
    in_memory = write_run(tmp_path / "memory", collector.tables(), metadata)
    through_parts = write_run_from_rows(tmp_path / "parts", rows, metadata)
    assert through_parts == in_memory
    names = [f"{name}.parquet" for name in TABLE_NAMES] + [SUMMARY_FILE, RUN_FILE]
    for name in names:
        assert (tmp_path / "parts" / name).read_bytes() == (tmp_path / "memory" / name).read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memory", "parts"]  # no scratch left
