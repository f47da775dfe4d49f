"""The recording of what a client did: recovery classes from hand-made exchanges, the files
`toolturn serve --record` writes (at SIGTERM too), and `toolturn probe`'s command line."""

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
import pyarrow.parquet as pq
import pytest

from toolturn.cli import main
from toolturn.errors import UserError
from toolturn.model.response import Turn
from toolturn.probe.suite import load_suite
from toolturn.wire.record_files import RECORDING_FILE, open_recording, write_recording
from toolturn.wire.recorder import Recorder
from toolturn.wire.recording import TABLES
from toolturn.wire.sent import SentCall

ROOT = Path(__file__).resolve().parents[2]
USER = {"role": "user", "content": "go"}
CALL = {"type": "tool_use", "id": "toolu_a", "name": "Read", "input": {}}
TEXT = {"type": "text", "text": "Reading."}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_a", "content": "ok"}


def exchange(recorder: Recorder, t_ns: int, turn: Turn, messages: list[Any],
             faults: tuple[str, ...] = (), violations: tuple[str, ...] = ()) -> int:
    raw = json.dumps(messages).encode()
    index = recorder.arrived(t_ns, turn, "m", messages, raw, violations)
    recorder.answered(index, status=400 if violations else 200, ending="cut" if faults else
                      "complete", faults=faults, end_ns=t_ns + 10,
                      calls=[SentCall("toolu_a", "Read", t_ns + 5)])
    return index


@pytest.mark.parametrize(("following", "violations", "expected"), [
    ([USER], (), "identical_retry"),
    # Other bytes, the same conversation (a system-role message is not a turn).
    ([USER, {"role": "system", "content": "context"}], (), "modified_retry"),
    ([USER, {"role": "assistant", "content": [TEXT, CALL]}, {"role": "user", "content": [RESULT]}],
     (), "calls_answered"),
    ([USER, {"role": "assistant", "content": [TEXT, CALL]},
      {"role": "user", "content": [{**RESULT, "is_error": True}]}], (),
     "calls_answered_with_errors"),
    # The text kept, the call dropped, a resume asked: the probe's class, not "kept blocks".
    ([USER, {"role": "assistant", "content": [TEXT]}, {"role": "user", "content": "continue"}],
     (), "calls_dropped_resumed"),
    ([USER, {"role": "user", "content": "please go on"}], (), "calls_dropped_resumed"),
    ([USER, {"role": "assistant", "content": [TEXT]}], (), "calls_dropped"),
    ([{"role": "user", "content": "something else"}], (), "transcript_rewritten"),
    ([USER, {"role": "user", "content": [RESULT]}], ("orphan",), "broken_transcript"),
])
def test_the_next_request_classifies_the_recovery(
    following: list[Any], violations: tuple[str, ...], expected: str
) -> None:
    recorder = Recorder()
    exchange(recorder, 0, Turn(1, 0, 1), [USER], faults=("cut_after_block",))
    exchange(recorder, 100, Turn(1, 0, 2), following, violations=violations)
    recovery = recorder.tables()["recoveries"].to_pylist()
    assert [r["recovery"] for r in recovery] == [expected]
    assert recovery[0]["delay_ns"] == 90 and recovery[0]["next_request_index"] == 1


def test_a_fault_without_a_next_request_is_stopped_after_its_window() -> None:
    recorder = Recorder(give_up_ns=1000)
    exchange(recorder, 0, Turn(1, 0, 1), [USER], faults=("http_status",))
    recorder.give_up(500)
    assert recorder.tables()["recoveries"].num_rows == 0
    recorder.give_up(1010)
    assert recorder.tables()["recoveries"].to_pylist()[0]["recovery"] == "stopped"


def test_a_next_request_while_the_faulted_answer_is_open_is_compared() -> None:
    """A client leaving a stall asks again before the stalled answer ends: that request is
    the recovery's next one, not a give-up (the delay is then negative)."""
    recorder = Recorder(give_up_ns=1000)
    first = recorder.arrived(0, Turn(1, 0, 1), "m", [USER], b"a", ())
    resume = [USER, {"role": "assistant", "content": [TEXT]}, {"role": "user", "content": "go on"}]
    recorder.arrived(50, Turn(1, 0, 2), "m", resume, b"b", ())
    recorder.answered(first, status=200, ending="aborted", faults=("stall_after_text",),
                      end_ns=5_000)
    recorder.give_up(None)
    [row] = recorder.tables()["recoveries"].to_pylist()
    assert (row["recovery"], row["next_request_index"], row["delay_ns"]) == ("resumed", 1, -4950)


def test_results_are_matched_to_their_calls_with_order_and_round_trip() -> None:
    recorder = Recorder()
    index = recorder.arrived(0, Turn(1, 0, 1), "m", [USER], b"a", ())
    recorder.answered(index, status=200, ending="complete", faults=(), end_ns=50,
                      calls=[SentCall("t1", "Bash", 10), SentCall("t2", "Read", 20)],
                      message_stop_ns=30)
    results = [{"type": "tool_result", "tool_use_id": "t2", "content": "r"},
               {"type": "tool_result", "tool_use_id": "t1", "content": "b", "is_error": True}]
    messages = [USER, {"role": "assistant", "content": "x"}, {"role": "user", "content": results}]
    recorder.arrived(100, Turn(1, 1, 1), "m", messages, b"b", ())
    calls = {c["tool_use_id"]: c for c in recorder.tables()["tool_calls"].to_pylist()}
    assert calls["t1"]["result_position"] == 1 and calls["t1"]["is_error"] is True
    assert calls["t2"]["round_trip_ns"] == 80 and calls["t2"]["message_stop_ns"] == 30
    assert calls["t1"]["results_in_order"] is False and calls["t1"]["result_request_index"] == 1
    second = recorder.tables()["requests"].to_pylist()[1]
    assert second["since_previous_response_ns"] == 50 and second["retry"] is False


def test_a_recording_folder_is_written_whole_and_never_over_other_files(tmp_path: Path) -> None:
    folder = open_recording(tmp_path / "rec")
    recorder = Recorder()
    exchange(recorder, 0, Turn(1, 0, 1), [USER])
    write_recording(folder, recorder.tables(), {"scenario": "s"})
    for spec in TABLES:
        assert pq.read_table(folder / f"{spec.name}.parquet").schema.remove_metadata().equals(
            spec.schema)
    assert json.loads((folder / RECORDING_FILE).read_text())["row_counts"]["requests"] == 1
    assert [p.name for p in folder.iterdir() if p.name.startswith(".")] == []  # no staging
    open_recording(folder)  # ours: may be recorded into again
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(UserError, match="holds files that are not a recording"):
        open_recording(other)


def test_sim_serve_record_flushes_what_was_answered_on_sigterm(tmp_path: Path) -> None:
    folder = tmp_path / "rec"
    process = subprocess.Popen(
        [sys.executable, "-m", "toolturn.cli", "serve", str(ROOT / "scenarios/default.toml"),
         "--port", "0", "--speed", "100", "--record", str(folder)],
        stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        found = re.search(r"http://\S+", process.stderr.readline())
        assert found is not None
        response = httpx2.post(f"{found.group(0)}/v1/messages", timeout=20, json={
            "model": "any", "max_tokens": 100, "messages": [USER], "stream": True})
        assert response.status_code == 200
        time.sleep(0.2)
        process.send_signal(signal.SIGTERM)
        _, rest = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0 and f"recorded in {folder}" in rest
    requests = pq.read_table(folder / "requests.parquet").to_pylist()
    assert len(requests) == 1 and requests[0]["status"] == 200
    # The request declared no tools: the default scenario's Edit and Write are never called.
    assert pq.read_table(folder / "tool_calls.parquet").num_rows == 0


@pytest.mark.parametrize(("words", "wording"), [
    (["probe", "--", "no-such-command-here"], "no-such-command-here: no such command"),
    (["probe", "scenarios/probes"], "put the agent's command after --"),
    (["probe", "a", "b", "--", "ls"], "one suite folder before --"),
    (["probe", "nowhere", "--", "ls"], "nowhere/suite.toml: no such file"),
    (["probe", "--case", "nope", "--", "ls"], "--case: no such case"),
])
def test_probe_command_line_errors(
    words: list[str], wording: str, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(ROOT)
    assert main(words) == 2
    assert wording in capsys.readouterr().err


def test_a_suite_with_a_fault_that_finds_nothing_is_refused(tmp_path: Path) -> None:
    (tmp_path / "c.toml").write_text((ROOT / "scenarios/probes/unknown_tool.toml").read_text())
    (tmp_path / "suite.toml").write_text(
        '[[case]]\nname = "c"\nscenario = "c.toml"\nfault = { kind = "unknown_tool", block = 9 }\n')
    with pytest.raises(UserError, match=r"case\[0\] \(c\): fault unknown_tool: .* block 9"):
        load_suite(tmp_path)
    (tmp_path / "suite.toml").write_text(
        '[[case]]\nname = "c"\nscenario = "c.toml"\nfault = { kind = "explode" }\n')
    with pytest.raises(UserError, match=r"case\[0\] \(c\): fault.kind: Input should be"):
        load_suite(tmp_path)


def test_sim_probe_runs_a_case_and_writes_its_scorecard(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / "probe"
    status = main(["probe", "--out", str(out), "--case", "cut_after_tool_use", "--",
                   sys.executable, "-m", "toolturn.probe.sdk_agent"])
    assert status == 0
    card = json.loads((out / "scorecard.json").read_text())["cases"]
    assert [(c["case"], c["per_run"][0]["exit"], c["rates"]) for c in card] == [
        ("cut_after_tool_use", 0, {"identical_retry": 1.0})]
    assert (out / "cut_after_tool_use" / "recoveries.parquet" / "part-000000.parquet").is_file()
    assert "| cut_after_tool_use " in capsys.readouterr().out


def test_sim_report_draws_a_page_for_a_recording(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = open_recording(tmp_path / "rec")
    recorder = Recorder()
    exchange(recorder, 0, Turn(1, 0, 1), [USER], faults=("cut_after_block",))
    exchange(recorder, 100, Turn(1, 0, 2), [USER])
    write_recording(folder, recorder.tables(), {"scenario": "probe <x>"})
    assert main(["report", str(folder)]) == 0
    page = (folder / "report" / "report.html").read_text()
    assert "recording of probe &lt;x&gt;" in page
    assert "<td>identical_retry</td><td>1</td>" in page
    assert "lost (block completed, no result): 2" in page  # no request brought results back
    assert main(["report", str(folder)]) == 0  # an older page is replaced
    assert "wrote " in capsys.readouterr().out


def test_a_flush_that_fails_is_logged_and_tried_again(tmp_path: Path) -> None:
    import asyncio
    import shutil

    from toolturn.wire.record_files import RecordingFiles, flush, flush_every

    folder = open_recording(tmp_path / "rec")
    files = RecordingFiles(folder, {})
    recorder = Recorder()
    exchange(recorder, 0, Turn(1, 0, 1), [USER])
    shutil.rmtree(folder)  # gone: every write fails (a full disk fails the same way)
    lines: list[str] = []

    async def scenario() -> None:
        task = asyncio.create_task(
            flush_every(recorder, files, lambda: 0, lines.append, interval_s=0.01))
        await asyncio.sleep(0.1)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(scenario())
    assert len(lines) >= 2 and lines[0].startswith("toolturn serve: cannot write the recording in")
    assert recorder.changed  # still to be written
    for spec in TABLES:
        (folder / f"{spec.name}.parquet").mkdir(parents=True)
    flush(recorder, files, 0)  # the rows of the flushes that failed were kept
    assert pq.read_table(folder / "requests.parquet").num_rows == 1


def test_a_call_written_after_the_next_request_arrived_is_not_what_it_answered() -> None:
    """The client asked again at 50 knowing only the text; the call the server wrote at 3000,
    into a connection the client had left, is not one it dropped."""
    recorder = Recorder()
    first = recorder.arrived(0, Turn(1, 0, 1), "m", [USER], b"a", ())
    resume = [USER, {"role": "assistant", "content": [TEXT]}, {"role": "user", "content": "go on"}]
    recorder.arrived(50, Turn(1, 0, 2), "m", resume, b"b", ())
    late = SentCall("toolu_a", "Read", 3_100, 1, {}, block_start_ns=3_000)
    recorder.answered(first, status=200, ending="complete", faults=("stall_after_block",),
                      end_ns=3_200, calls=[late])
    assert recorder.tables()["recoveries"].to_pylist()[0]["recovery"] == "resumed"
