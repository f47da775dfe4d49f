"""Rows of the run tables as they are made: column by column, never a dict per row.

A table's `Columns` holds one list per column of its schema (`toolturn.metrics.schema`), in the
schema's order, without the columns every row of a unit shares (`ADDED_COLUMNS`: the run-wide
`run_id`, `scenario`, `seed` and the unit's `UNIT_COLUMNS`, added as constants when the tables
are assembled, `toolturn.metrics.assemble`); a row is one value appended to each list. `Rows` is
every table's, by name. `TableBuilder.extend` takes them as they are, and a builder refuses lists
of unequal lengths, so a row missing a column is caught when the table is built.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolturn.metrics.schema import TABLES, UNIT_COLUMNS, TableSpec

# Filled by whoever writes the run (`toolturn.metrics.parts` rule 2), not by the rows' maker.
RUN_WIDE_COLUMNS = ("run_id", "scenario", "seed")
# Every column the rows' maker leaves out: the run's and the unit's (its arm and load level: the
# same on every row of a unit), given as constants when the tables are assembled.
ADDED_COLUMNS = RUN_WIDE_COLUMNS + UNIT_COLUMNS

Columns = dict[str, list[Any]]
Rows = dict[str, Columns]


def empty_columns(spec: TableSpec) -> Columns:
    """No rows of `spec`'s table: an empty list per column, in its schema's order (rule above)."""
    return {name: [] for name in spec.column_names if name not in ADDED_COLUMNS}


def empty_rows() -> Rows:
    """No rows of any of `TABLES`."""
    return {spec.name: empty_columns(spec) for spec in TABLES}


def with_constants(
    columns: Mapping[str, Sequence[Any]], constants: Mapping[str, Any]
) -> dict[str, Sequence[Any]]:
    """`columns` with a column per entry of `constants`, its value on every row: for a table held
    in memory whole (`toolturn.metrics.collector`); written runs get them at assembly instead."""
    count = len(next(iter(columns.values()))) if columns else 0
    return {**columns, **{name: [value] * count for name, value in constants.items()}}
