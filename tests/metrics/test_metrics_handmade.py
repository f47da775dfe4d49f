"""The hand-made run of tests/helpers/metrics_support.py: its tables fit every schema."""

from __future__ import annotations

from tests.helpers.metrics_support import handmade_tables
from toolturn.metrics.schema import TABLES


def test_handmade_run_fits_every_schema() -> None:
    tables = handmade_tables()
    assert [name for name in tables] == [spec.name for spec in TABLES]
    for spec in TABLES:
        assert tables[spec.name].schema.equals(spec.schema)
    assert {name: table.num_rows for name, table in tables.items()} == {
        "turns": 5,
        "tools": 6,
        "repairs": 3,
        "requests": 6,
        "sessions": 3,
    }
