"""A run written before the `protocol`, `misfires`, `misfired`, `error_type` and `error_message`
columns existed reads as this version's (toolturn/metrics/reader.py `LATER_COLUMNS`): every row was
on the Messages API, without misfires, and no session was an agent's, so an older baseline (or
yesterday's run) stays comparable without a rerun."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from tests.helpers.metrics_support import handmade_tables, metadata
from toolturn.metrics import read_run, write_run
from toolturn.metrics.schema import TABLES


def test_tables_without_the_later_columns_read_as_this_version_s(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    write_run(folder, handmade_tables(), metadata())
    now = read_run(folder)
    for spec in TABLES:
        path = folder / f"{spec.name}.parquet"
        table = pq.read_table(path)
        later = ("protocol", "misfires", "misfired", "error_type", "error_message")
        older = table.drop_columns([name for name in later if name in table.column_names])
        pq.write_table(older, path)
    before = read_run(folder)
    for spec in TABLES:
        assert before.tables[spec.name].equals(now.tables[spec.name]), spec.name
