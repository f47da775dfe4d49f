"""The recording's folder, written as it grows: each table a folder of part files, and
`recording.json` (what was served, row counts).

    DIR/recording.json
    DIR/requests.parquet/part-000000.parquet ...   rows that are final, never rewritten
    DIR/requests.parquet/_open.parquet             rows a later request can still change
    (the same for tool_calls.parquet and recoveries.parquet)

1. A flush writes only what is new: the rows made final since the last flush become one more
   part file of each table that has any (`toolturn.metrics.parts.write_part`: written beside
   its name, flushed to disk and renamed, so a reader or a SIGKILL only ever sees whole files),
   then each table's `_open.parquet` is replaced with the rows still open (the requests in
   flight, the calls awaiting results: as many as the sessions in progress hold), then
   `recording.json` (with the flush count and how long the latest flush's tables took,
   `flush_ms`, and the final rows it wrote, `flush_rows`). Its cost follows the rows of one
   interval, not the recording's length.
2. Readers: `pyarrow.parquet.read_table(DIR/"requests.parquet")` and
   `pandas.read_parquet(DIR/"requests.parquet", dtype_backend="pyarrow")` read a table folder
   as one table of its final rows (they skip names starting with `_` or `.`; `dtype_backend`
   keeps the nullable `*_ns` columns integers, which plain pandas makes float64); `read_table`
   here adds the open rows, so a recording read while it is made, or after a SIGKILL, has every
   row of its last flush. A recording of the old layout (each table one file) reads the same
   way.
3. Part files follow each other in the order their rows became final; within one, rows are in
   the table's key order. `read_table` gives the whole table in key order.
4. `recording.json` says the recording's `version` (`RECORDING_VERSION`). Version 2 counts
   turns from 1 (`turn_index`, as every table and `x-sim-turn` do); a recording without a
   version counted them from 0, and `read_table` reads its `turn_index` plus 1, so old and new
   recordings read alike (one without a readable `recording.json` is read as it is).
5. The folder is ours if it holds `recording.json`; any other existing folder with files in it
   is refused, so a recording never mixes with or overwrites someone else's files. A new
   recording into our folder replaces the tables of the previous one when it starts, and writes
   an empty part of each table then, so the folder is a readable recording from the start.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from toolturn.errors import UserError
from toolturn.metrics.parts import write_part
from toolturn.metrics.schema import TableSpec
from toolturn.wire.recorder import Recorder, Rows
from toolturn.wire.recording import ADDED_COLUMNS, TABLES, rows_table

RECORDING_FILE = "recording.json"
OPEN_FILE = "_open.parquet"
FLUSH_S = 2.0
METADATA_KEY = b"sim.recording"
# 2: turns counted from 1 (rule 4). A recording without a version counted them from 0.
RECORDING_VERSION = 2
_TURN = "turn_index"


def open_recording(folder: Path) -> Path:
    """Make `folder` ready for a recording (created if missing); a UserError names it if it
    cannot be one."""
    folder = Path(folder)
    try:
        if folder.exists() and not folder.is_dir():
            raise UserError(f"--record {folder}: not a folder")
        if folder.is_dir() and any(folder.iterdir()) and not (folder / RECORDING_FILE).is_file():
            raise UserError(f"--record {folder}: holds files that are not a recording")
        folder.mkdir(parents=True, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=folder, prefix=".probe-", delete=True)
        probe.close()
    except OSError as error:
        raise UserError(f"--record {folder}: cannot write there ({error.strerror})") from None
    return folder


def table_path(folder: Path, spec: TableSpec) -> Path:
    return Path(folder) / f"{spec.name}.parquet"


class RecordingFiles:
    """Writes one recording into `folder` (made ready by `open_recording`), flush by flush."""

    def __init__(self, folder: Path, metadata: Mapping[str, Any]) -> None:
        self.folder = Path(folder)
        self._key_value = {METADATA_KEY: json.dumps(dict(metadata), sort_keys=True).encode()}
        self._metadata = dict(metadata)
        self._parts = dict.fromkeys((spec.name for spec in TABLES), 0)
        self._final_rows = dict.fromkeys(self._parts, 0)
        # Rows taken from the recorder but not yet on disk (a flush failed): kept for the next.
        self._unwritten: Rows = {name: [] for name in self._parts}
        self._flushes = 0
        self._flush_ms = 0.0  # the latest flush's tables, written (not its recording.json)
        self._flush_rows = 0  # the final rows it wrote
        for spec in TABLES:
            self._clear(table_path(self.folder, spec))
            table_path(self.folder, spec).mkdir()
            self._write_part(spec, [])
        self._write_summary({name: 0 for name in self._parts})

    def write(self, final: Rows, open_rows: Rows) -> None:
        """One flush: `final` rows as new parts, then the open rows, then `recording.json`.
        On an OSError nothing of `final` is lost: it is written with the next flush."""
        started = time.perf_counter()
        self._flush_rows = 0
        for spec in TABLES:
            self._unwritten[spec.name] += final.get(spec.name, [])
        for spec in TABLES:
            rows = self._unwritten[spec.name]
            if rows:
                self._write_part(spec, rows)
                self._final_rows[spec.name] += len(rows)
                self._flush_rows += len(rows)
                self._unwritten[spec.name] = []
        for spec in TABLES:
            self._write_open(spec, open_rows.get(spec.name, []))
        self._flushes += 1
        self._flush_ms = (time.perf_counter() - started) * 1000
        self._write_summary({spec.name: len(open_rows.get(spec.name, [])) for spec in TABLES})

    def _write_part(self, spec: TableSpec, rows: Sequence[dict[str, Any]]) -> None:
        path = table_path(self.folder, spec) / f"part-{self._parts[spec.name]:06d}.parquet"
        write_part(path, rows_table(spec, rows).replace_schema_metadata(self._key_value))
        self._parts[spec.name] += 1

    def _write_open(self, spec: TableSpec, rows: Sequence[dict[str, Any]]) -> None:
        path = table_path(self.folder, spec) / OPEN_FILE
        if rows:
            write_part(path, rows_table(spec, rows).replace_schema_metadata(self._key_value))
        else:
            path.unlink(missing_ok=True)

    def _write_summary(self, open_counts: Mapping[str, int]) -> None:
        summary = {"version": RECORDING_VERSION, "metadata": self._metadata,
                   "row_counts": {name: self._final_rows[name] + open_counts[name]
                                  for name in self._parts},
                   "open_rows": dict(open_counts), "parts": dict(self._parts),
                   "flushes": self._flushes, "flush_ms": round(self._flush_ms, 3),
                   "flush_rows": self._flush_rows}
        text = json.dumps(summary, indent=2, sort_keys=True) + "\n"
        _replace_text(self.folder / RECORDING_FILE, text)

    @staticmethod
    def _clear(path: Path) -> None:
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)


def write_recording(folder: Path, tables: Mapping[str, pa.Table],
                    metadata: Mapping[str, Any]) -> None:
    """A whole recording at once (`toolturn probe`'s cases): every table's rows as final."""
    files = RecordingFiles(folder, metadata)
    files.write({name: table.to_pylist() for name, table in tables.items()}, {})


def flush(recorder: Recorder, files: RecordingFiles, now_ns: int | None) -> None:
    """Close the recoveries and sessions whose time is up (all, when `now_ns` is None: the end)
    and write what changed."""
    recorder.give_up(now_ns)
    if recorder.changed or now_ns is None:
        recorder.changed = False
        files.write(recorder.new_rows(), recorder.open_rows())


async def flush_every(recorder: Recorder, files: RecordingFiles, clock_ns: Callable[[], int],
                      log: Callable[[str], None], interval_s: float = FLUSH_S) -> None:
    """Flush every `interval_s` until cancelled; the caller flushes a last time after. A flush
    that fails (a full disk) is logged and tried again at the next interval: the rows stay in
    memory, and the files keep the last flush that succeeded."""
    while True:
        await asyncio.sleep(interval_s)
        try:
            flush(recorder, files, clock_ns())
        except OSError as error:
            recorder.changed = True
            log(f"toolturn serve: cannot write the recording in {files.folder}: "
                f"{error.strerror or error}")


def read_table(folder: Path, spec: TableSpec) -> pa.Table:
    """Table `spec` of the recording in `folder`, final and open rows, in key order (rule 2), its
    columns as stored (a column added since an older recording was made is null in it). Raises
    OSError or pyarrow.ArrowException for a missing or broken table."""
    path = table_path(folder, spec)
    table = _with_added(pq.read_table(path), spec)
    if path.is_dir() and (path / OPEN_FILE).is_file():
        open_rows = _with_added(pq.read_table(path / OPEN_FILE), spec)
        # A row made final between a flush's part and its `_open` file is in both: the part's
        # copy is the later one.
        final_keys = set(zip(*(table[name].to_pylist() for name in spec.sort_key), strict=True))
        keys = zip(*(open_rows[name].to_pylist() for name in spec.sort_key), strict=True)
        keep = pa.array([key not in final_keys for key in keys], pa.bool_())
        table = pa.concat_tables([table, open_rows.filter(keep).select(table.column_names)])
    if _TURN in table.column_names and _turns_from_zero(folder):
        where = table.column_names.index(_TURN)
        table = table.set_column(where, table.schema.field(where),
                                 pc.add(table.column(where), 1))
    if not set(spec.sort_key) <= set(table.column_names):
        return table  # not a table of ours: the caller names what is wrong with it
    return table.sort_by([(name, "ascending") for name in spec.sort_key])


def _turns_from_zero(folder: Path) -> bool:
    """Whether the recording in `folder` counted turns from 0: its `recording.json` has no
    version (rule 4). False when it cannot be read: nothing says the recording is old."""
    try:
        summary = json.loads((Path(folder) / RECORDING_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(summary, dict) and "version" not in summary


def _with_added(table: pa.Table, spec: TableSpec) -> pa.Table:
    for name in ADDED_COLUMNS:
        if name in spec.column_names and name not in table.column_names:
            kind = spec.schema.field(name).type
            table = table.append_column(pa.field(name, kind), pa.nulls(table.num_rows, kind))
    return table


def _replace_text(path: Path, text: str) -> None:
    handle, staging = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(handle, "w", encoding="utf-8") as file:
        file.write(text)
        file.flush()
        os.fsync(file.fileno())
    os.replace(staging, path)
