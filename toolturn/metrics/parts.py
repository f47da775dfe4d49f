"""The rows of one unit of a run written as they come: a folder of Parquet part files.

A unit (one simulation, or one block of its sessions) hands over each session's rows as the
session is recorded; memory holds only the sessions not yet written plus one batch per table.

1. Rows are written in the tables' order: by session id, and within a session by the table's sort
   key then every column (`TableBuilder.build`). Sessions end out of order, so a session is held
   until every session of a lower id of the unit has ended (then it is released): what waits is
   the sessions that ended before an older one, never the unit.
2. Every `FLUSH_SESSIONS` released sessions become one row group of each table's part files.
   Part files lack the columns every row of the unit shares (`row_columns.ADDED_COLUMNS`: the
   run-wide `run_id`, `scenario`, `seed` and the unit's arm and load level): the run folder adds
   them as constants (`toolturn.metrics.assemble`), so a unit's parts depend neither on where the
   run is written nor on what the unit is called.
3. A table's rows go into numbered part files (`part_files`) of at most `GROUPS_PER_FILE` row
   groups each: a Parquet writer keeps every row group's metadata until it closes, so one file
   for a long unit would grow with the unit.
4. A part folder is complete once its `DONE_FILE` exists: the files are written under temporary
   names and renamed, the marker (holding the task's counters) last. A folder without it is
   from an interrupted unit and is written again.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from toolturn.metrics.row_columns import ADDED_COLUMNS
from toolturn.metrics.schema import EVENTS, TABLES, TableSpec
from toolturn.metrics.tables import TableBuilder

# Sessions released per row group of a part file: small enough that a batch of rows is a few
# megabytes at most, large enough that a unit of the default scenario is one or two groups.
FLUSH_SESSIONS = 256
# Row groups per part file (rule 3). An open writer holds about 17 KB of metadata per row group
# of `turns` (measured: 2,000 groups grew a process by 34 MB), so a worker running a unit of
# 100,000 sessions grew by about 30 MB with one file per table; 16 groups hold under 1 MB.
GROUPS_PER_FILE = 16
DONE_FILE = "done"
PART_COMPRESSION = "zstd"
# A session's rows: by table, a list per column (`toolturn.metrics.row_columns`).
Rows = Mapping[str, Mapping[str, Sequence[Any]]]


def part_spec(spec: TableSpec) -> TableSpec:
    """`spec` without the columns assembly adds (rule 2): the schema of its part files. Those are
    constant within a part, so leaving them out of the sort key keeps the rows' order."""
    fields = [field for field in spec.schema if field.name not in ADDED_COLUMNS]
    key = tuple(name for name in spec.sort_key if name not in ADDED_COLUMNS)
    return TableSpec(spec.name, pa.schema(fields), key)


def is_complete(folder: Path) -> bool:
    """Whether `folder` holds a unit's finished parts (rule 4)."""
    return (folder / DONE_FILE).is_file()


def part_files(folder: Path, table: str) -> list[Path]:
    """The part files of `table` in a finished unit's `folder`, in order (rule 3)."""
    files: list[Path] = []
    while (path := _part_path(folder, table, len(files))).is_file():
        files.append(path)
    return files


def _part_path(folder: Path, table: str, number: int) -> Path:
    return folder / f"{table}.{number}.parquet"


def write_part(path: Path, table: pa.Table, compression: str = PART_COMPRESSION) -> None:
    """`table` as the whole part file `path`: written beside it under a hidden name (which
    Parquet dataset readers skip), flushed to disk and renamed, so a reader, a crash or a
    SIGKILL sees the file whole or not at all."""
    path = Path(path)
    handle, staging = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    os.close(handle)
    try:
        pq.write_table(table, staging, compression=compression)
        with open(staging, "rb") as written:
            os.fsync(written.fileno())
        os.replace(staging, path)
    except BaseException:
        Path(staging).unlink(missing_ok=True)
        raise


class UnitParts:
    """Writes one unit's tables into `folder` (created), session by session; `close` finishes."""

    def __init__(self, folder: Path, *, trace: bool = False, first_session: int = 0) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        specs = (*TABLES, EVENTS) if trace else TABLES
        self._specs = {spec.name: part_spec(spec) for spec in specs}
        self._writers: dict[str, pq.ParquetWriter] = {}  # the open file of each table
        self._groups: dict[str, int] = {}  # row groups in it
        self._files = dict.fromkeys(self._specs, 0)  # the files of each table finished
        self._builders = self._fresh_builders()
        self._held: dict[int, Rows] = {}
        self._next = first_session
        self._released = 0

    def _fresh_builders(self) -> dict[str, TableBuilder]:
        return {name: TableBuilder(spec, {}) for name, spec in self._specs.items()}

    def add_session(self, session_id: int, rows: Rows) -> None:
        """The rows of one recorded session, column by column (rule 1)."""
        self._held[session_id] = rows
        while self._next in self._held:
            self._release(self._held.pop(self._next))
            self._next += 1

    def add_events(self, columns: Mapping[str, Sequence[Any]]) -> None:
        """The unit's event trace, column by column (after its last session)."""
        self._builders[EVENTS.name].extend(columns)

    def _release(self, rows: Rows) -> None:
        for name, columns in rows.items():
            self._builders[name].extend(columns)
        self._released += 1
        if self._released % FLUSH_SESSIONS == 0:
            self._flush()

    def _flush(self) -> None:
        builders, self._builders = self._builders, self._fresh_builders()
        for name, builder in builders.items():
            if len(builder):
                self._writer(name).write_table(builder.build())
                self._groups[name] += 1
                if self._groups[name] == GROUPS_PER_FILE:
                    self._finish(name)

    def _writer(self, name: str) -> pq.ParquetWriter:
        writer = self._writers.get(name)
        if writer is None:
            writer = pq.ParquetWriter(
                self._partial(name), self._specs[name].schema, compression=PART_COMPRESSION
            )
            self._writers[name] = writer
            self._groups[name] = 0
        return writer

    def _partial(self, name: str) -> Path:
        return self.folder / f"{name}.{self._files[name]}.parquet.partial"

    def _finish(self, name: str) -> None:
        """Closes the open file of table `name` (one without rows if it has none yet) under
        its final name."""
        self._writer(name).close()
        del self._writers[name]
        os.replace(self._partial(name), _part_path(self.folder, name, self._files[name]))
        self._files[name] += 1

    def close(self, note: str = "") -> None:
        """Writes what is held (sessions still held: in id order) and marks the folder done,
        the marker holding `note` (the task's counters)."""
        for session_id in sorted(self._held):
            self._release(self._held.pop(session_id))
        self._flush()
        for name in self._specs:
            if name in self._writers or self._files[name] == 0:
                self._finish(name)  # every table has at least one file
        marker = self.folder / f"{DONE_FILE}.partial"
        marker.write_text(note, encoding="utf-8")
        os.replace(marker, self.folder / DONE_FILE)

    def abandon(self) -> None:
        """Closes the files of a unit that failed (its folder stays incomplete)."""
        for writer in self._writers.values():
            writer.close()
