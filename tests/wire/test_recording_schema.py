"""The serve recording's tables are specified column by column, as the run tables are: each
column's description and unit in the files' field metadata, in `toolturn schema` and in the
generated column reference."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from toolturn.cli import main
from toolturn.reference.pages import PAGES
from toolturn.wire.record_files import open_recording, table_path, write_recording
from toolturn.wire.recorder import Recorder
from toolturn.wire.recording import PREFIX, TABLES


def test_every_recording_column_has_a_description_and_the_ns_ones_a_unit() -> None:
    for spec in TABLES:
        assert [c.name for c in spec.columns] == list(spec.column_names)
        for field in spec.schema:
            metadata = field.metadata or {}
            assert metadata.get(b"description"), f"{spec.name}.{field.name}"
            if field.name.endswith("_ns"):
                assert metadata.get(b"unit") == b"ns", f"{spec.name}.{field.name}"


def test_the_recordings_files_carry_the_descriptions(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recorder = Recorder()
    recorder.refused(5, 400, "body is not JSON")
    folder = open_recording(tmp_path / "rec")
    write_recording(folder, recorder.tables(), {"scenario": "s"})
    for spec in TABLES:
        part = next(table_path(folder, spec).glob("part-*.parquet"))
        schema = pq.read_schema(part)
        assert all(schema.field(c.name).metadata == c.metadata for c in spec.columns)
    part = next(table_path(folder, TABLES[0]).glob("part-*.parquet"))
    assert main(["schema", str(part)]) == 0
    # The unit column comes from the file's field metadata (descriptions wrap in the terminal).
    assert re.search(r"│ bytes +│", capsys.readouterr().out)


def test_toolturn_schema_and_the_reference_list_the_recordings_tables(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "recording.tool_calls"]) == 0
    out = capsys.readouterr().out
    assert "round_trip_ns" in out and "result_request_index" in out
    assert main(["schema"]) == 0
    out = capsys.readouterr().out
    assert all(PREFIX + spec.name in out for spec in TABLES) and "turns" in out
    page = PAGES["tables.md"]()
    for spec in TABLES:
        assert f"\n## {PREFIX}{spec.name}\n" in page
        assert all(f"| `{name}` |" in page for name in spec.column_names)
