"""The recording's folder: `requests.parquet`, `tool_calls.parquet`, `recoveries.parquet` and
`recording.json` (what was served, row counts), rewritten whole at each flush.

Each file is written beside its final name, flushed to disk and renamed over it, so a reader (or
a crash, or a SIGKILL) only ever sees a complete file: the previous flush's or this one's. The
folder is ours if it holds `recording.json`; any other existing folder with files in it is
refused, so a recording never mixes with or overwrites someone else's files.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from toolturn.errors import UserError
from toolturn.metrics.writer import COMPRESSION
from toolturn.wire.recorder import Recorder

RECORDING_FILE = "recording.json"
FLUSH_S = 2.0
METADATA_KEY = b"sim.recording"


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


def write_recording(folder: Path, tables: Mapping[str, pa.Table],
                    metadata: Mapping[str, Any]) -> None:
    """One flush: every table, then `recording.json`, each replaced atomically."""
    key_value = {METADATA_KEY: json.dumps(dict(metadata), sort_keys=True).encode()}
    for name, table in tables.items():
        _replace(folder / f"{name}.parquet",
                 lambda path, t=table: pq.write_table(t.replace_schema_metadata(key_value), path,
                                                      compression=COMPRESSION))
    summary = {"metadata": dict(metadata),
               "row_counts": {name: table.num_rows for name, table in tables.items()}}
    text = json.dumps(summary, indent=2, sort_keys=True) + "\n"
    _replace(folder / RECORDING_FILE, lambda path: Path(path).write_text(text, encoding="utf-8"))


def flush(recorder: Recorder, folder: Path, metadata: Mapping[str, Any],
          now_ns: int | None) -> None:
    """Close the recoveries whose time is up (all, when `now_ns` is None: the end) and write
    the recording if anything changed."""
    recorder.give_up(now_ns)
    if recorder.changed or now_ns is None:
        recorder.changed = False
        write_recording(folder, recorder.tables(), metadata)


async def flush_every(recorder: Recorder, folder: Path, metadata: Mapping[str, Any],
                      clock_ns: Callable[[], int], log: Callable[[str], None],
                      interval_s: float = FLUSH_S) -> None:
    """Flush every `interval_s` until cancelled; the caller flushes a last time after. A flush
    that fails (a full disk) is logged and tried again at the next interval: the rows stay in
    memory, and the files keep the last flush that succeeded."""
    while True:
        await asyncio.sleep(interval_s)
        try:
            flush(recorder, folder, metadata, clock_ns())
        except OSError as error:
            recorder.changed = True
            log(f"toolturn serve: cannot write the recording in {folder}: "
                f"{error.strerror or error}")


def _replace(path: Path, write: Any) -> None:
    handle, staging = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    os.close(handle)
    try:
        write(staging)
        with open(staging, "rb") as written:
            os.fsync(written.fileno())
        os.replace(staging, path)
    except BaseException:
        Path(staging).unlink(missing_ok=True)
        raise
