"""Turns count from 1 in a recording, as in every table and in `x-sim-turn`; a recording made
when they counted from 0 (no `version` in its `recording.json`) reads the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq

from toolturn.model.response import Turn
from toolturn.wire.record_files import (
    RECORDING_FILE,
    RECORDING_VERSION,
    open_recording,
    read_table,
    write_recording,
)
from toolturn.wire.recorder import Recorder
from toolturn.wire.recording import REQUESTS, TOOL_CALLS
from toolturn.wire.sent import SentCall

USER: dict[str, Any] = {"role": "user", "content": "go"}


def _two_turns(folder: Path) -> Path:
    """A session's first turn (the model's key 0), whose call is answered in its second."""
    recorder = Recorder()
    first = [USER]
    index = recorder.arrived(0, Turn(4, 0, 1), "m", first, b"1", ())
    recorder.answered(index, status=200, ending="complete", faults=(), end_ns=10,
                      calls=[SentCall("toolu_1", "Read", 5)], first_byte_ns=1, bytes_sent=9)
    second = [USER, {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                      "content": "ok"}]}]
    index = recorder.arrived(20, Turn(4, 1, 1), "m", second, b"2", ())
    recorder.answered(index, status=200, ending="complete", faults=(), end_ns=30,
                      first_byte_ns=21, bytes_sent=9)
    write_recording(open_recording(folder), recorder.tables(), {"scenario": "s"})
    return folder


def test_a_recording_counts_turns_from_1(tmp_path: Path) -> None:
    folder = _two_turns(tmp_path / "rec")
    summary = json.loads((folder / RECORDING_FILE).read_text(encoding="utf-8"))
    assert summary["version"] == RECORDING_VERSION == 2
    assert read_table(folder, REQUESTS).column("turn_index").to_pylist() == [1, 2]
    assert read_table(folder, TOOL_CALLS).column("turn_index").to_pylist() == [1]


def test_a_recording_without_a_version_counted_from_0_and_reads_from_1(tmp_path: Path) -> None:
    folder = _two_turns(tmp_path / "rec")
    # The same recording as an older release wrote it: turns from 0, no version.
    for name in ("requests", "tool_calls", "recoveries"):
        for part in (folder / f"{name}.parquet").glob("*.parquet"):
            table = pq.read_table(part)
            where = table.column_names.index("turn_index")
            pq.write_table(table.set_column(where, table.schema.field(where),
                                            pc.subtract(table.column(where), 1)), part)
    summary_path = folder / RECORDING_FILE
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    del summary["version"]
    summary_path.write_text(json.dumps(summary), encoding="utf-8")
    assert read_table(folder, REQUESTS).column("turn_index").to_pylist() == [1, 2]
    assert read_table(folder, TOOL_CALLS).column("turn_index").to_pylist() == [1]
