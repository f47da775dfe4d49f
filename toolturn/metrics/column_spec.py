"""One column of a table, specified once: its name, Arrow type, whether it can be null, its unit
and what it means. The table schemas (`toolturn.metrics.schema`) are lists of them; the Parquet
files carry the unit and the description as each field's key-value metadata, `toolturn schema`
prints them, and the docs' column reference reads them (`toolturn.metrics.columns.all_specs`).

Durations and times stay ``int64`` nanoseconds (exact, and what pandas, polars and DuckDB all
read as plain integers); the ``unit`` says so on every such column, so a reader need not guess
from the ``_ns`` suffix.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

__all__ = ["Column", "column"]

# Units by column name where the name's form does not say it (`column`).
_UNITS: dict[str, str] = {
    "input_tokens": "tokens",
    "output_tokens": "tokens",
    "load": "sessions, or sessions/s",
}


@dataclass(frozen=True, slots=True)
class Column:
    """A column's specification ('' unit: unitless)."""

    name: str
    type: pa.DataType
    description: str
    nullable: bool = False
    unit: str = ""

    @property
    def field(self) -> pa.Field:
        """The Arrow field, without metadata (the tables' own schema)."""
        return pa.field(self.name, self.type, nullable=self.nullable)

    @property
    def metadata(self) -> dict[bytes, bytes]:
        """The field's key-value metadata in a Parquet file: description, and unit if any."""
        metadata = {b"description": self.description.encode()}
        if self.unit:
            metadata[b"unit"] = self.unit.encode()
        return metadata


def column(
    name: str, type_: pa.DataType, description: str, *, nullable: bool = False,
    unit: str | None = None,
) -> Column:
    """A column whose unit, unless given, follows from its name: ``ns`` for ``*_ns``, ``count``
    for ``n_*`` and ``retries``, tokens and load by name."""
    if unit is None:
        unit = "ns" if name.endswith("_ns") else _UNITS.get(name, "")
        if name.startswith("n_") or name == "retries":
            unit = "count"
    return Column(name, type_, description, nullable, unit)
