"""Every column of every table is described, with its unit, in the Parquet files and by
`toolturn schema` (issue 14, section 5)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.helpers.metrics_support import handmade_tables, metadata
from toolturn.cli import main
from toolturn.metrics import write_run
from toolturn.metrics.columns import all_specs, describe
from toolturn.metrics.schema import TABLES


@pytest.mark.parametrize("spec", all_specs(), ids=lambda spec: spec.name)
def test_every_column_has_a_description_and_times_say_ns(spec) -> None:
    for field in spec.schema:
        description, unit = describe(spec.name, field.name)
        assert len(description) > 8, field.name
        if field.name.endswith("_ns"):
            assert unit == "ns", field.name


def test_the_files_carry_them_and_still_read_as_before(tmp_path: Path) -> None:
    write_run(tmp_path / "run", handmade_tables(), metadata())
    for spec in TABLES:
        schema = pq.read_schema(tmp_path / "run" / f"{spec.name}.parquet")
        assert schema.remove_metadata().equals(spec.schema)  # field metadata aside
        for field in schema:
            assert field.metadata[b"description"].decode() == describe(spec.name, field.name)[0]
        if spec.name == "turns":
            assert schema.field("ttfts_ns").metadata[b"unit"] == b"ns"
            assert b"unit" not in schema.field("policy").metadata
    summary = pq.read_schema(tmp_path / "run" / "summary.parquet")
    assert b"baseline policy" in summary.field("versus").metadata[b"description"]


def test_sim_schema_prints_a_table_a_file_or_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # descriptions on one line each
    assert main(["schema", "tools"]) == 0
    out = capsys.readouterr().out
    assert "start_lag_ns" in out and "start_ns - block_stop_ns" in out
    write_run(tmp_path / "run", handmade_tables(), metadata())
    assert main(["schema", str(tmp_path / "run" / "turns.parquet")]) == 0
    assert "time to first tool start" in capsys.readouterr().out
    assert main(["schema"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in ("sessions", "events", "summary"))
    assert main(["schema", "turn"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a table" in err
