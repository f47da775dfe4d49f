"""The column specifications of every table by name (`toolturn.metrics.column_spec.Column`, made
in `toolturn.metrics.schema`), for what reads them apart from the schemas: the Parquet files'
field metadata (``description``, ``unit``), `toolturn schema`, and the docs' column reference.

`all_specs()` is the stable accessor: every table `toolturn schema` describes, each a
`TableSpec` whose `columns` give each column's name, type, nullability, unit and description.
"""

from __future__ import annotations

import pyarrow as pa

from toolturn.metrics.column_spec import Column
from toolturn.metrics.schema import (
    OPTIONAL_TABLES,
    POINT_COLUMN_SPECS,
    POINT_SUMMARY_COLUMNS,
    SUMMARY_COLUMNS,
    TABLES,
    TableSpec,
    table_spec,
)

__all__ = ["SUMMARY", "all_specs", "column_of", "describe", "described_schema"]

SUMMARY = "summary"


def all_specs() -> list[TableSpec]:
    """Every table `toolturn schema` describes: the run tables, the trace and the summary."""
    return [*TABLES, *OPTIONAL_TABLES, table_spec(SUMMARY, SUMMARY_COLUMNS, ())]


# Each table's columns by name, with the point columns a run of experiment points adds.
_COLUMNS: dict[str, dict[str, Column]] = {
    **{
        spec.name: {c.name: c for c in (*spec.columns, *POINT_COLUMN_SPECS)}
        for spec in (*TABLES, *OPTIONAL_TABLES)
    },
    SUMMARY: {c.name: c for c in POINT_SUMMARY_COLUMNS},
}


def column_of(table: str, column: str) -> Column:
    """The specification of a column of `table`."""
    found = _COLUMNS.get(table, {}).get(column)
    if found is None:
        raise KeyError(f"{table}.{column}: no column spec (add it to toolturn.metrics.schema)")
    return found


def describe(table: str, column: str) -> tuple[str, str]:
    """The (description, unit) of a column of `table` ('' for a unitless column)."""
    spec = column_of(table, column)
    return spec.description, spec.unit


def described_schema(name: str, schema: pa.Schema) -> pa.Schema:
    """`schema` with each field's ``description`` and ``unit`` as its metadata."""
    fields = [field.with_metadata(column_of(name, field.name).metadata) for field in schema]
    return pa.schema(fields, metadata=schema.metadata)
