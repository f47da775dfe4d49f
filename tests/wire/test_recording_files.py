"""The recording's files (issue 32, section 2): a flush writes only the rows made final since the
last one, written rows leave the recorder's memory, and the folder reads as one table set at
any moment (pyarrow and pandas on a table's folder, `read_table` with the open rows too), after
a SIGKILL as well."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx2
import pandas as pd
import pyarrow.parquet as pq

from toolturn.cli import main
from toolturn.model.response import Turn
from toolturn.probe.sdk_agent import TOOLS
from toolturn.wire.record_files import (
    OPEN_FILE,
    RECORDING_FILE,
    RecordingFiles,
    flush,
    open_recording,
    read_table,
)
from toolturn.wire.recorder import Recorder
from toolturn.wire.recording import REQUESTS, TABLES, TOOL_CALLS
from toolturn.wire.sent import SentCall

ROOT = Path(__file__).resolve().parents[2]
USER = {"role": "user", "content": "go"}


def ask(recorder: Recorder, t_ns: int, session: int, turn: int, messages: list[Any],
        calls: tuple[str, ...] = ()) -> int:
    index = recorder.arrived(t_ns, Turn(session, turn, 1), "m", messages,
                             json.dumps(messages).encode(), ())
    recorder.answered(index, status=200, ending="complete", faults=(), end_ns=t_ns + 10,
                      calls=[SentCall(c, "Read", t_ns + 5) for c in calls],
                      first_byte_ns=t_ns + 1, bytes_sent=100)
    return index


def parts(folder: Path, table: str) -> list[str]:
    return sorted(p.name for p in (folder / f"{table}.parquet").iterdir())


def test_a_flush_writes_only_the_new_rows_and_the_open_ones_beside(tmp_path: Path) -> None:
    folder = open_recording(tmp_path / "rec")
    files = RecordingFiles(folder, {"scenario": "s"})
    assert all(pq.read_table(folder / f"{s.name}.parquet").num_rows == 0 for s in TABLES)
    recorder = Recorder(give_up_ns=1_000)
    ask(recorder, 0, 1, 0, [USER], calls=("t1",))
    flush(recorder, files, 20)
    assert parts(folder, "requests") == ["part-000000.parquet", "part-000001.parquet"]
    # The call awaits its result: written open, beside the parts, which readers of the
    # folder skip; read_table has it.
    assert parts(folder, "tool_calls") == [OPEN_FILE, "part-000000.parquet"]
    assert pq.read_table(folder / "tool_calls.parquet").num_rows == 0
    assert read_table(folder, TOOL_CALLS)["result_request_index"].to_pylist() == [None]
    flush(recorder, files, 30)  # nothing new: nothing written
    assert parts(folder, "requests") == ["part-000000.parquet", "part-000001.parquet"]
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}]}
    ask(recorder, 100, 1, 1, [USER, {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]}, result])
    flush(recorder, files, 200)
    newest = pq.read_table(folder / "requests.parquet" / "part-000002.parquet")
    assert newest["request_index"].to_pylist() == [1]  # only the new row
    assert parts(folder, "tool_calls") == ["part-000000.parquet", "part-000001.parquet"]
    calls = pd.read_parquet(folder / "tool_calls.parquet")
    assert calls["result_request_index"].tolist() == [1]
    assert len(pd.read_parquet(folder / "requests.parquet")) == 2
    assert read_table(folder, REQUESTS)["time_to_first_byte_ns"].to_pylist() == [1, 1]
    summary = json.loads((folder / RECORDING_FILE).read_text())
    assert summary["row_counts"] == {"requests": 2, "tool_calls": 1, "recoveries": 0}
    recorder.give_up(2_000)  # the session is quiet past its window: it is over
    assert recorder.held() == {"sessions": 0, "in_flight": 0, "awaiting": 0, "unwritten": 0}
    RecordingFiles(folder, {"scenario": "again"})  # a new recording replaces the old tables
    assert parts(folder, "requests") == ["part-000000.parquet"]


def test_the_recorder_holds_the_sessions_in_progress_not_the_recording(tmp_path: Path) -> None:
    files = RecordingFiles(open_recording(tmp_path / "rec"), {})
    recorder = Recorder(give_up_ns=1_000)
    most = 0
    for session in range(600):
        t_ns = session * 100
        ask(recorder, t_ns, session, 0, [USER], calls=("a", "b"))
        if session % 10 == 0:
            flush(recorder, files, t_ns)
            most = max(most, recorder.held()["sessions"], recorder.held()["awaiting"] // 2)
    flush(recorder, files, None)
    # Sessions stay 1,000 ns: about ten are in progress at a time, whatever the count.
    assert most <= 12 and recorder.held()["sessions"] == 0
    calls = read_table(files.folder, TOOL_CALLS)
    assert calls.num_rows == 1_200 and calls["result_request_index"].null_count == 1_200


def test_a_recording_killed_with_sigkill_reads_as_its_last_flush(tmp_path: Path) -> None:
    folder, workdir = tmp_path / "rec", tmp_path / "work"
    (workdir / "src").mkdir(parents=True)
    (workdir / "README.md").write_text("# x\n")
    (workdir / "src" / "app.py").write_text("x = 1\n")
    process = subprocess.Popen(
        [sys.executable, "-m", "toolturn", "serve",
         str(ROOT / "toolturn/scenarios/probes/two_calls_clean.toml"), "--port", "0",
         "--speed", "100", "--record", str(folder), "--client-dir", str(workdir),
         "--flush-every", "0.2"],
        stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        found = re.search(r"http://\S+", process.stderr.readline())
        assert found is not None
        for n in range(3):
            response = httpx2.post(f"{found.group(0)}/v1/messages", timeout=20, json={
                "model": "m", "max_tokens": 100, "stream": True, "tools": TOOLS,
                "messages": [{"role": "user", "content": f"look {n}"}]})
            assert response.status_code == 200
        time.sleep(0.6)  # a flush has come
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
    requests = read_table(folder, REQUESTS).to_pylist()
    assert [r["status"] for r in requests] == [200, 200, 200]
    assert all(r["bytes_sent"] > 0 for r in requests)
    calls = read_table(folder, TOOL_CALLS)  # awaiting results when killed: the open rows
    assert calls.num_rows > 0 and calls["result_request_index"].null_count == calls.num_rows
    assert pq.read_table(folder / "requests.parquet").num_rows == 3
    counts = json.loads((folder / RECORDING_FILE).read_text())["row_counts"]
    assert counts == {"requests": 3, "tool_calls": calls.num_rows, "recoveries": 0}
    assert main(["report", str(folder)]) == 0
