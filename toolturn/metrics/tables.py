"""Row accumulation into columns, and the checked, sorted Arrow table built from them.

Appending a row costs a few list appends (the engine adds rows in its hot loop); all checking
(types, nulls) is done once per column when the table is built, and every error names the table,
the column and the first offending row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from toolturn.metrics.schema import TableSpec


class MetricsError(ValueError):
    """A row does not fit its table's schema (unknown column, wrong type, missing value)."""


def _plain(type_: pa.DataType) -> pa.DataType:
    # Columns are built and sorted in their plain type: Arrow cannot sort dictionary arrays, and
    # encoding after the sort makes each dictionary's order a function of the rows alone.
    return type_.value_type if pa.types.is_dictionary(type_) else type_


class TableBuilder:
    """Collects the rows of one table column by column.

    ``constants`` gives the value of columns that are the same on every row (``run_id``,
    ``seed``); rows must not set them. Any other column a row leaves out is null.
    """

    def __init__(self, spec: TableSpec, constants: Mapping[str, Any]) -> None:
        unknown = set(constants) - set(spec.column_names)
        if unknown:
            raise MetricsError(f"{spec.name}: unknown constant column(s) {sorted(unknown)}")
        self.spec = spec
        self._constants = dict(constants)
        self._columns: dict[str, list[Any]] = {
            name: [] for name in spec.column_names if name not in self._constants
        }
        self._names = frozenset(self._columns)
        self._items = tuple(self._columns.items())
        self._rows = 0

    def __len__(self) -> int:
        return self._rows

    def append(self, row: Mapping[str, Any]) -> None:
        """Adds one row; raises ``MetricsError`` at once if it names a column the table lacks."""
        if not row.keys() <= self._names:
            unknown = sorted(set(row) - self._names)
            raise MetricsError(
                f"{self.spec.name}: unknown or constant column(s) {unknown}; "
                f"columns are {sorted(self._names)}"
            )
        for name, column in self._items:
            column.append(row.get(name))
        self._rows += 1

    def extend(self, columns: Mapping[str, Sequence[Any]]) -> None:
        """Adds rows given column by column (every column the same length); a column left out is
        null. For tables with many small rows (the event trace): no dict per row."""
        if not columns.keys() <= self._names:
            unknown = sorted(set(columns) - self._names)
            raise MetricsError(
                f"{self.spec.name}: unknown or constant column(s) {unknown}; "
                f"columns are {sorted(self._names)}"
            )
        lengths = {len(values) for values in columns.values()}
        if len(lengths) > 1:
            raise MetricsError(f"{self.spec.name}: columns of different lengths {sorted(lengths)}")
        count = lengths.pop() if lengths else 0
        for name, column in self._items:
            values = columns.get(name)
            column.extend(values if values is not None else [None] * count)
        self._rows += count

    def build(self) -> pa.Table:
        """The rows as a table of the spec's exact schema, sorted by its key then all columns."""
        arrays = [self._column_array(field) for field in self.spec.schema]
        plain = pa.Table.from_arrays(arrays, names=list(self.spec.column_names))
        order = list(self.spec.sort_key) + [
            name for name in self.spec.column_names if name not in self.spec.sort_key
        ]
        ordered = plain.sort_by([(name, "ascending") for name in order])
        encoded = [
            column.combine_chunks().dictionary_encode()
            if pa.types.is_dictionary(field.type)
            else column.combine_chunks()
            for field, column in zip(self.spec.schema, ordered.columns, strict=True)
        ]
        return pa.Table.from_arrays(encoded, schema=self.spec.schema)

    def _column_array(self, field: pa.Field) -> pa.Array:
        if field.name in self._constants:
            values = [self._constants[field.name]] * self._rows
        else:
            values = self._columns[field.name]
        where = f"{self.spec.name}.{field.name}"
        try:
            array = pa.array(values, type=_plain(field.type))
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError) as error:
            bad = _first_bad_row(values, _plain(field.type))
            raise MetricsError(f"{where}: row {bad}: {error}") from error
        if array.null_count and not field.nullable:
            raise MetricsError(f"{where}: row {values.index(None)}: missing value (not nullable)")
        return array


def _first_bad_row(values: list[Any], type_: pa.DataType) -> int:
    # Only on the error path: find which row made the column fail, for the message.
    for index, value in enumerate(values):
        try:
            pa.array([value], type=type_)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
            return index
    return -1
