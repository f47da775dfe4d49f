"""The columns naming an experiment point (`toolturn.experiment.points.Point`) in a run's tables.

A run of more than one point (its points have a non-empty key) gives every table three columns,
after the run-wide ones: `point` (the point's index in the run), `replication` (which seed of the
point) and `point_key` (its settings as `toolturn.experiment.points.settings_text` spells them:
"path=value" joined by ";" in key order, each value as compact JSON). Rows are sorted by `point`
first. A plain scenario's run has none of them, so its tables are what they were before
experiments existed.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from toolturn.metrics.schema import POINT_COLUMN_SPECS, TableSpec

__all__ = ["POINT_FIELDS", "point_values", "with_point_columns"]

POINT_FIELDS: tuple[pa.Field, ...] = tuple(c.field for c in POINT_COLUMN_SPECS)
_AFTER = ("run_id", "scenario", "seed")


def with_point_columns(spec: TableSpec) -> TableSpec:
    """`spec` with the point columns after its run-wide columns, sorted by `point` first."""
    fields = list(spec.schema)
    at = max((i + 1 for i, field in enumerate(fields) if field.name in _AFTER), default=0)
    schema = pa.schema([*fields[:at], *POINT_FIELDS, *fields[at:]])
    columns = spec.columns and (*spec.columns[:at], *POINT_COLUMN_SPECS, *spec.columns[at:])
    return TableSpec(spec.name, schema, ("point", *spec.sort_key), columns)


def point_values(index: int, replication: int, key_text: str) -> dict[str, Any]:
    """The three columns' values for every row of one point."""
    return {"point": index, "replication": replication, "point_key": key_text}
