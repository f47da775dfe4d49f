"""One column spec (`toolturn.metrics.column_spec.Column`: type, nullability, unit, description)
is what the table schemas are made of, what the Parquet files carry as field metadata and what
`toolturn schema` prints (issue 32, section 3); turn numbers start at 1, in the data and in the
words."""

from __future__ import annotations

from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from tests.helpers.metrics_support import handmade_tables, metadata
from toolturn.cli import main
from toolturn.engine.runner import run_scenario
from toolturn.metrics import write_run
from toolturn.metrics.columns import SUMMARY, all_specs, column_of
from toolturn.metrics.schema import SUMMARY_SCHEMA, TABLES
from toolturn.scenario.loader import load_scenario, with_overrides

GOLDEN = Path(__file__).parents[1] / "golden"


@pytest.mark.parametrize("spec", all_specs(), ids=lambda spec: spec.name)
def test_every_schema_is_made_of_its_column_specs(spec) -> None:
    assert spec.columns, spec.name
    assert [c.field for c in spec.columns] == list(spec.schema)
    for c in spec.columns:
        assert column_of(spec.name, c.name) is c


def test_the_files_carry_the_specs_metadata(tmp_path: Path) -> None:
    write_run(tmp_path / "run", handmade_tables(), metadata())
    tables = [(spec.name, spec.schema) for spec in TABLES] + [(SUMMARY, SUMMARY_SCHEMA)]
    for name, schema in tables:
        written = pq.read_schema(tmp_path / "run" / f"{name}.parquet")
        assert written.names == schema.names
        for field in written:
            assert field.metadata == column_of(name, field.name).metadata, (name, field.name)


def test_an_unknown_column_is_named() -> None:
    with pytest.raises(KeyError, match=r"turns\.no_such: no column spec"):
        column_of("turns", "no_such")


def test_turn_numbers_start_at_1_in_the_data_and_the_words(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = with_overrides(load_scenario(GOLDEN / "interrupts.toml"), sessions=3)
    tables = run_scenario(scenario).tables("r")
    for name in ("turns", "tools", "requests"):
        assert pc.min(tables[name]["turn_index"]).as_py() == 1, name
        assert column_of(name, "turn_index").description.endswith("from 1")
    monkeypatch.setenv("COLUMNS", "400")
    assert main(["schema", "turns"]) == 0
    assert "the turn's number within its session, from 1" in capsys.readouterr().out
