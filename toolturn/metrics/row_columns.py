"""Rows of the run tables as they are made: column by column, never a dict per row.

A table's `Columns` holds one list per column of its schema (`toolturn.metrics.schema`), in the
schema's order, without the run-wide columns (`run_id`, `scenario`, `seed`: whoever writes the
run fills them); a row is one value appended to each list. `Rows` is every table's, by name.
`TableBuilder.extend` takes them as they are, and a builder refuses lists of unequal lengths, so
a row missing a column is caught when the table is built.
"""

from __future__ import annotations

from typing import Any

from toolturn.metrics.schema import TABLES, TableSpec

# Filled by whoever writes the run (`toolturn.metrics.parts` rule 2), not by the rows' maker.
RUN_WIDE_COLUMNS = ("run_id", "scenario", "seed")

Columns = dict[str, list[Any]]
Rows = dict[str, Columns]


def empty_columns(spec: TableSpec) -> Columns:
    """No rows of `spec`'s table: an empty list per column, in its schema's order (rule above)."""
    return {name: [] for name in spec.column_names if name not in RUN_WIDE_COLUMNS}


def empty_rows() -> Rows:
    """No rows of any of `TABLES`."""
    return {spec.name: empty_columns(spec) for spec in TABLES}
