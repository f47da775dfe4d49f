"""A run's tables from its units' part files (`toolturn.metrics.parts`), one row group at a time.

Each table of the run folder is its units' part files one after the other, in the order of the
tables' sort key (profile, policy, load_level, then the block's first session), with the run-wide
columns added. The rows are the rows the whole run's table would have, in the same order, and
every row group holds exactly `ROW_GROUP_ROWS` rows (the last one fewer), so the file is the same
bytes however the run was split into units or blocks, and whichever process wrote them. Memory
holds one row group per table.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from toolturn.metrics.columns import described_schema
from toolturn.metrics.schema import TableSpec

# Rows per row group of a run table. Fixed (never a function of the units), so that a serial, a
# parallel and a distributed run write the same bytes. A group is held about three times while it
# is written (the batches it is cut from, its columns made whole, the writer's pages): at 65,536
# rows that took a --jobs 1 run of 20,000 default sessions to 1.30x the peak of 1,000 (issue 19
# asks 1.25x at most); a quarter of it is still large enough for Parquet's pages and statistics.
ROW_GROUP_ROWS = 16_384
COMPRESSION = "zstd"


# A part file of a table and the values of the columns its rows share but it lacks (the run-wide
# columns, the point's).
Part = tuple[Path, Mapping[str, Any]]


def assemble_table(
    path: Path, spec: TableSpec, parts: Sequence[Part], key_value: dict[bytes, bytes]
) -> int:
    """Writes table `spec` to `path` from the part files `parts` (in order), each row given its
    part's constant columns; returns its row count."""
    row_group_rows = ROW_GROUP_ROWS
    schema = described_schema(spec.name, spec.schema).with_metadata(key_value)
    plain = pa.schema([pa.field(f.name, _plain(f.type), f.nullable) for f in spec.schema])
    rows = 0
    with pq.ParquetWriter(path, schema, compression=COMPRESSION) as writer:
        for group in _groups(_batches(parts, plain), plain, row_group_rows):
            writer.write_table(_encoded(group, schema), row_group_size=row_group_rows)
            rows += group.num_rows
        if rows == 0:
            writer.write_table(schema.empty_table())
    return rows


def read_table(spec: TableSpec, parts: Sequence[Part]) -> pa.Table:
    """The whole table `spec` from the part files `parts` (in order) in memory: the rows
    `assemble_table` writes, as one table of `spec.schema`."""
    plain = pa.schema([pa.field(f.name, _plain(f.type), f.nullable) for f in spec.schema])
    batches = list(_batches(parts, plain))
    table = pa.concat_tables(batches) if batches else plain.empty_table()
    return _encoded(table, spec.schema)


def _batches(parts: Sequence[Part], plain: pa.Schema) -> Iterator[pa.Table]:
    for part, constants in parts:
        part_file = pq.ParquetFile(part)
        for index in range(part_file.num_row_groups):
            group = part_file.read_row_group(index)
            yield _with_constants(group, plain, constants)


def _with_constants(group: pa.Table, plain: pa.Schema, constants: Mapping[str, Any]) -> pa.Table:
    columns = []
    for field in plain:
        if field.name in constants:
            columns.append(pa.array([constants[field.name]] * group.num_rows, type=field.type))
        else:
            column = group[field.name]
            columns.append(column.cast(field.type) if column.type != field.type else column)
    return pa.Table.from_arrays(columns, schema=plain)


def _groups(batches: Iterator[pa.Table], plain: pa.Schema, size: int) -> Iterator[pa.Table]:
    """The rows of `batches` re-cut into tables of exactly `size` rows (the last one fewer)."""
    pending: list[pa.Table] = []
    held = 0
    for batch in batches:
        pending.append(batch)
        held += batch.num_rows
        while held >= size:
            table = pa.concat_tables(pending)
            yield table.slice(0, size)
            rest = table.slice(size)
            pending, held = [rest], rest.num_rows
    if held:
        yield pa.concat_tables(pending)


def _encoded(group: pa.Table, schema: pa.Schema) -> pa.Table:
    # Dictionaries are built per row group from its rows alone (in first-seen order), so the
    # bytes depend on the rows and nothing else.
    columns = []
    for field, column in zip(schema, group.columns, strict=True):
        combined = column.combine_chunks()
        columns.append(combined.dictionary_encode() if pa.types.is_dictionary(field.type)
                       else combined)
    return pa.Table.from_arrays(columns, schema=schema)


def _plain(type_: pa.DataType) -> pa.DataType:
    return type_.value_type if pa.types.is_dictionary(type_) else type_
