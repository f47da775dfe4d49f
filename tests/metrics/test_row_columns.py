"""A session's rows as the recorder makes them (toolturn/metrics/row_columns.py): a list per column,
in the schema's order without the run-wide columns, every column of a table the same length."""

from __future__ import annotations

import pytest

from tests.helpers.engine_runs import default_scenario, dict_rows, run
from toolturn.metrics.row_columns import ADDED_COLUMNS, empty_columns, empty_rows
from toolturn.metrics.schema import TABLES, TOOLS
from toolturn.metrics.tables import MetricsError, TableBuilder


def test_the_columns_follow_the_schema_without_those_assembly_adds() -> None:
    rows = empty_rows()
    assert list(rows) == [spec.name for spec in TABLES]
    for spec in TABLES:
        expected = [name for name in spec.column_names if name not in ADDED_COLUMNS]
        assert list(rows[spec.name]) == expected
        assert all(values == [] for values in rows[spec.name].values())


def test_a_simulation_fills_every_column_of_every_row() -> None:
    result = run(default_scenario(4))
    for spec in TABLES:
        lengths = {len(values) for values in result.rows[spec.name].values()}
        assert len(lengths) == 1, spec.name
    assert lengths.pop() == 4  # sessions: one row each
    tools = dict_rows(result.rows["tools"])
    assert tools and tools[0].keys() == result.rows["tools"].keys()


def test_a_row_missing_a_column_is_refused_when_built() -> None:
    columns = empty_columns(TOOLS)
    for name, values in columns.items():
        if name != "outcome":
            values.append(None)
    with pytest.raises(MetricsError, match="different lengths"):
        TableBuilder(TOOLS, {"run_id": "r"}).extend(columns)
