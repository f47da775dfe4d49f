"""`toolturn serve --record` folders as logged sessions: the real fixture (figures by
hand), recordings made by the recorder's own code, and broken ones (reported with
their file, never a crash)."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from toolturn.cli import main
from toolturn.errors import UserError
from toolturn.model.response import Turn
from toolturn.traces.calibrate import calibrated_scenario
from toolturn.traces.replay import EMPTY_RESPONSE_TEXT, scripted_responses
from toolturn.traces.sources import read_logs
from toolturn.traces.stats import trace_stats
from toolturn.wire.record_files import RECORDING_FILE, write_recording
from toolturn.wire.recorder import Recorder
from toolturn.wire.sent import SentCall

RECORDINGS = Path(__file__).parents[1] / "fixtures" / "traces" / "serve-record"
CLEAN = RECORDINGS / "two_calls_clean"


def _copy(tmp_path: Path, name: str = "two_calls_clean") -> Path:
    target = tmp_path / name
    shutil.copytree(RECORDINGS / name, target)
    return target


def test_the_real_recording_gives_its_steps_calls_and_round_trips() -> None:
    logs = read_logs([str(CLEAN)])
    assert len(logs.skipped) == 0 and logs.formats == {str(CLEAN): "serve-recording"}
    [session] = logs.sessions
    assert session.session_id == "17283948369968566823" and not session.bodies_logged
    assert [s.where for s in session.steps] == [
        f"{CLEAN}/requests.parquet:0", f"{CLEAN}/requests.parquet:1"]
    assert [s.has_response for s in session.steps] == [True, True]
    assert [s.model for s in session.steps] == ["claude-haiku-4-5"] * 2
    first, last = session.steps
    # arrival 3,034,946,406 ns, end 3,203,773,830 ns
    assert (first.sent_ms, first.last_block_ms) == (3034.946406, 3203.77383)
    calls = [(c.name, c.use_ms, c.result_ms, c.is_error, c.input_logged) for c in first.tool_calls]
    # Block stops, and the arrival of request 1 (3,243,409,902 ns), which brought both results.
    assert calls == [("Read", 3156.217152, 3243.409902, False, False),
                     ("Bash", 3203.264731, 3243.409902, False, False)]
    # The recording's own round_trip_ns, 87,192,750 and 40,145,171.
    assert [c.duration_ms for c in first.tool_calls] == [
        pytest.approx(87.19275), pytest.approx(40.145171)]
    assert [b["name"] for b in first.blocks] == ["Read", "Bash"] and last.tool_calls == []
    assert session.prompts_ms == [3034.946406]  # one prompt: the SDK agent asks once


def test_cut_and_overloaded_requests_are_api_errors_and_their_retries_steps() -> None:
    logs = read_logs([str(RECORDINGS / "cut_after_tool_use"), str(RECORDINGS / "overloaded_storm")])
    cut, storm = logs.sessions
    assert [s.api_error for s in cut.steps] == ["cut: cut_after_block", None, None]
    # The cut response's Read was sent (its block stopped) and never answered.
    assert [(c.name, c.result_ms) for c in cut.steps[0].tool_calls] == [("Read", None)]
    assert [s.api_error for s in storm.steps] == ["http_error: HTTP 529"] * 3 + [None, None]
    # A failed request and its retries are not new prompts.
    assert len(cut.prompts_ms) == 1 and len(storm.prompts_ms) == 1


def test_stats_of_the_recordings_by_hand() -> None:
    f = trace_stats(read_logs([str(RECORDINGS)]))
    assert (f["files"], f["sessions"], f["prompts"], f["requests"]) == (3, 3, 3, 10)
    # Answered steps: [2 calls, 0], [2, 0] (the retry of the cut one), [1, 0] (after three 529s).
    assert (f["model_steps"], f["api_errors"]) == (6, 4)
    assert f["api_errors_by_kind"] == {"cut": 1, "http_error": 3}
    assert f["tool_calls"] == 5 and f["tool_calls_by_tool"] == {"Bash": 2, "Read": 3}
    per_step = f["tool_calls_per_step"]  # sorted 0 0 0 1 2 2
    assert per_step["mean"] == pytest.approx(5 / 6) and per_step["p50"] == 0.5
    assert per_step["p90"] == 2.0 and f["parallel_share"] == pytest.approx(2 / 3)
    # Round trips (ms): Read 87.19275, 54.692851, 80.471217; Bash 40.145171, 16.69027.
    read, bash = f["tool_duration_ms_by_tool"]["Read"], f["tool_duration_ms_by_tool"]["Bash"]
    assert (read["n"], read["p50"], read["max"]) == (3, pytest.approx(80.471217),
                                                     pytest.approx(87.19275))
    assert bash["p50"] == pytest.approx((40.145171 + 16.69027) / 2)
    assert f["tool_calls_without_result"] == 0
    # What a recording cannot give: no bodies, no tokens, no first-block time.
    assert f["requests_without_history"] == 10 and f["repairs_by_kind"] == {}
    assert f["repairs_per_1000_requests"] == {} and f["pairing_violations"] == 0
    assert f["output_tokens_per_response"]["n"] == 0 and f["first_block_delay_ms"]["n"] == 0
    assert [(r["format"], r["requests"]) for r in f["by_file"]] == [
        ("serve-recording", 3), ("serve-recording", 5), ("serve-recording", 2)]


def test_calibrate_from_recordings_keeps_durations_and_invents_no_inputs() -> None:
    text = calibrated_scenario(read_logs([str(RECORDINGS)]), "rec", 1)
    tools = {t["name"]: t for t in tomllib.loads(text)["tools"]["define"]}
    assert set(tools) == {"Bash", "Read"}
    assert tools["Bash"]["duration"]["kind"] == "empirical"
    assert all("examples" not in tool for tool in tools.values())


def _made_recording(folder: Path) -> None:
    """Two prompts of one session, the second with a pairing violation, and a refused body:
    written by the recorder and the writer `toolturn serve --record` uses."""
    recorder = Recorder()
    prompt = [{"role": "user", "content": "hi"}]
    first = recorder.arrived(1_000_000, Turn(7, 0, 1), "m", prompt, b"a", [])
    recorder.answered(first, status=200, ending="complete", faults=(), end_ns=5_000_000,
                      calls=[SentCall("t1", "Grep", 4_000_000)], message_stop_ns=5_000_000)
    results = [*prompt, {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "Grep", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                      "is_error": True}]}]
    second = recorder.arrived(9_000_000, Turn(7, 1, 1), "m", results, b"b", [])
    recorder.answered(second, status=200, ending="complete", faults=(), end_ns=12_000_000)
    again = [*results, {"role": "assistant", "content": "done"},
             {"role": "user", "content": "and now?"}]
    third = recorder.arrived(512_000_000, Turn(7, 2, 1), "m", again, b"c", ["orphan result"])
    recorder.answered(third, status=400, ending="http_error", faults=(), end_ns=513_000_000)
    recorder.refused(600_000_000, 400, "body is not JSON")
    write_recording(folder, recorder.tables(), {"case": "made"})


def test_prompts_think_time_violations_and_refused_requests(tmp_path: Path) -> None:
    _made_recording(tmp_path)
    logs = read_logs([str(tmp_path)])
    [session] = logs.sessions
    # A request after a complete response without calls is a new prompt: 500 ms after it ended.
    assert session.prompts_ms == [1.0, 512.0] and session.think_times_ms() == [500.0]
    assert [s.prompt_index for s in session.steps] == [0, 0, 1]
    [call] = session.tool_calls
    assert (call.duration_ms, call.is_error) == (5.0, True)  # block stop 4 ms, result at 9 ms
    assert session.steps[2].api_error == "http_error: HTTP 400"
    assert [str(line) for line in logs.skipped.lines] == [
        f"{tmp_path}/requests.parquet:3: skipped: refused before the model: body is not JSON"]
    f = trace_stats(logs)
    assert f["pairing_violations"] == 1 and f["tool_errors_by_tool"] == {"Grep": 1}


def _reasons(folder: Path) -> list[tuple[str, int, str]]:
    logs = read_logs([str(folder)])
    return [(Path(s.file).name, s.line, s.reason) for s in logs.skipped.lines]


def test_a_missing_or_truncated_requests_table_skips_the_recording(tmp_path: Path) -> None:
    missing = _copy(tmp_path, "two_calls_clean")
    (missing / "requests.parquet").unlink()
    assert _reasons(missing) == [("requests.parquet", 0, "missing table")]
    assert read_logs([str(missing)]).sessions == []
    truncated = _copy(tmp_path / "t", "two_calls_clean")
    data = (truncated / "requests.parquet").read_bytes()
    (truncated / "requests.parquet").write_bytes(data[: len(data) // 2])
    [(name, line, reason)] = _reasons(truncated)
    assert (name, line) == ("requests.parquet", 0) and reason.startswith("not a Parquet table: ")


def test_a_table_of_the_wrong_schema_is_named_with_its_column(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    table = pq.read_table(folder / "requests.parquet")
    pq.write_table(table.drop_columns(["end_ns"]), folder / "requests.parquet")
    assert _reasons(folder) == [("requests.parquet", 0, "wrong schema: no column 'end_ns'")]
    calls = pq.read_table(folder / "tool_calls.parquet")
    retyped = calls.set_column(calls.schema.get_field_index("name"), "name",
                               pa.array([1] * calls.num_rows))
    pq.write_table(retyped, folder / "tool_calls.parquet")
    pq.write_table(table, folder / "requests.parquet")
    # A bad tool_calls table costs the calls only: the requests are still steps.
    assert _reasons(folder) == [("tool_calls.parquet", 0,
                                 "wrong schema: column 'name' is int64, not string")]
    [session] = read_logs([str(folder)]).sessions
    assert len(session.steps) == 2 and session.tool_calls == []


def test_a_missing_or_broken_summary_is_reported_and_the_tables_read(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    (folder / RECORDING_FILE).write_text('{"metadata": ', encoding="utf-8")
    [(name, line, reason)] = _reasons(folder)
    assert (name, line) == (RECORDING_FILE, 0) and reason.startswith("not JSON: ")
    (folder / RECORDING_FILE).unlink()
    assert _reasons(folder) == [(RECORDING_FILE, 0, "missing recording summary")]
    assert len(read_logs([str(folder)]).sessions) == 1


def test_stats_over_a_folder_with_a_broken_recording_reports_and_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _copy(tmp_path, "two_calls_clean")
    broken = _copy(tmp_path, "overloaded_storm")
    (broken / "requests.parquet").write_bytes(b"PAR1 cut short")
    assert main(["traces", "stats", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert f"{broken}/requests.parquet:0: skipped: not a Parquet table" in err
    assert "sessions 1" in out and "requests 2" in out
    assert "2 of them from toolturn serve --record folders" in out


def test_replay_scripts_a_recording_s_tool_sequence_and_round_trips() -> None:
    [session] = read_logs([str(CLEAN)]).sessions
    first, last = scripted_responses(session)
    assert [(b["name"], b["input"], b["result"]) for b in first["blocks"]] == [
        ("Read", {}, ""), ("Bash", {}, "")]  # no inputs or results in a recording
    assert [b["duration_ms"] for b in first["blocks"]] == [
        pytest.approx(87.19275), pytest.approx(40.145171)]
    assert last["blocks"] == [{"type": "text", "text": EMPTY_RESPONSE_TEXT}]


def test_a_search_finds_recordings_by_their_summary_not_run_folders(tmp_path: Path) -> None:
    _copy(tmp_path / "recs", "two_calls_clean")
    run = tmp_path / "recs" / "run-x"
    run.mkdir()
    (run / "run.json").write_text("{}", encoding="utf-8")
    pq.write_table(pa.table({"a": [1]}), run / "requests.parquet")  # a run's own requests table
    logs = read_logs([str(tmp_path)])
    assert logs.files == [str(tmp_path / "recs" / "two_calls_clean")] and len(logs.skipped) == 0
    absent = r"no \*.jsonl log files or toolturn serve --record folders"
    with pytest.raises(UserError, match=absent):
        read_logs([str(run)])
