"""Issue 29, section 5: three `toolturn traces` defects, each with the shape that showed it.

- a timestamp out of range (`1e308`, `5`) is a bad line, reported and skipped, not a think time
  of centuries (or of nothing);
- one byte that is not UTF-8 skips its line, not the file;
- `traces stats --out DIR` on a full disk is one line and exit 2, not an OSError traceback."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest

import toolturn.traces.tables as trace_tables
from toolturn.cli import main
from toolturn.traces.sources import read_logs
from toolturn.traces.timestamps import epoch_ms


def user(text: str, ts: object) -> dict[str, object]:
    return {"type": "user", "sessionId": "s", "timestamp": ts,
            "message": {"role": "user", "content": text}}


def assistant(mid: str, ts: object) -> dict[str, object]:
    return {"type": "assistant", "sessionId": "s", "timestamp": ts,
            "message": {"id": mid, "role": "assistant", "stop_reason": "end_turn",
                        "content": [{"type": "text", "text": "done"}],
                        "usage": {"output_tokens": 3}}}


def write(path: Path, lines: list[object]) -> Path:
    path.write_bytes(b"".join(
        (line if isinstance(line, bytes) else json.dumps(line).encode()) + b"\n" for line in lines
    ))
    return path


@pytest.mark.parametrize("value", [1e308, 5, -1, 4102444800, "0001-01-01T00:00:00Z"])
def test_a_timestamp_out_of_range_is_no_time(value: object) -> None:
    with pytest.raises(ValueError, match="out of range"):
        epoch_ms(value)


def test_in_range_timestamps_are_read() -> None:
    assert epoch_ms(1764591000.5) == 1764591000500.0
    assert epoch_ms("2026-12-01T15:39:31.977Z") == pytest.approx(1796139571977.0)


def test_out_of_range_timestamps_are_skipped_lines_and_no_think_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "s.jsonl", [
        user("one", "2026-01-01T00:00:00Z"),
        assistant("m1", "2026-01-01T00:00:01Z"),
        user("two", 1e308),
        user("three", 5),
        user("four", "2026-01-01T00:00:04Z"),
        assistant("m2", "2026-01-01T00:00:05Z"),
    ])
    assert main(["traces", "stats", str(path), "--json"]) == 0
    captured = capsys.readouterr()
    assert f"{path}:3: skipped: bad timestamp: timestamp 1e+308 is out of range" in captured.err
    assert f"{path}:4: skipped: bad timestamp: timestamp 5 is out of range" in captured.err
    assert "Infinity" not in captured.out
    figures = json.loads(captured.out)
    assert figures["skipped_lines"]["count"] == 2
    # The one think time is the logged 3 s from the first response to the prompt "four".
    assert figures["think_time_ms"]["n"] == 1 and figures["think_time_ms"]["max"] == 3000.0


def test_calibrate_writes_no_value_from_an_out_of_range_timestamp(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", [
        user("one", "2026-01-01T00:00:00Z"), assistant("m1", "2026-01-01T00:00:01Z"),
        user("two", 1e308), assistant("m2", "2026-01-01T00:00:05Z"),
    ])
    out = tmp_path / "c.toml"
    assert main(["traces", "calibrate", str(path), "-o", str(out)]) == 0
    assert "1e9" not in out.read_text() and "1000000000" not in out.read_text()


def test_one_line_that_is_not_utf8_is_skipped_and_the_rest_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "s.jsonl", [
        user("one", "2026-01-01T00:00:00Z"),
        b'{"type": "user", "sessionId": "s", "message": "\xff"}',
        assistant("m1", "2026-01-01T00:00:01Z"),
    ])
    logs = read_logs([str(path)])
    assert [(s.line, s.reason) for s in logs.skipped.lines] == [
        (2, "not UTF-8: invalid start byte at byte 47")]
    (session,) = logs.sessions
    assert len(session.steps) == 1
    assert main(["traces", "stats", str(path)]) == 0
    assert f"{path}:2: skipped: not UTF-8" in capsys.readouterr().err


def test_a_byte_order_mark_and_crlf_line_ends_are_read(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = [json.dumps(user("one", "2026-01-01T00:00:00Z")),
             json.dumps(assistant("m1", "2026-01-01T00:00:01Z"))]
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode() + b"\r\n")
    logs = read_logs([str(path)])
    assert not logs.skipped.lines and len(logs.sessions[0].steps) == 1


def test_stats_out_on_a_full_disk_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "s.jsonl", [
        user("one", "2026-01-01T00:00:00Z"), assistant("m1", "2026-01-01T00:00:01Z")])
    def to_full_disk(table: object, where: object, *args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(trace_tables.pq, "write_table", to_full_disk)
    out = tmp_path / "tables"
    assert main(["traces", "stats", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"--out: {out}: cannot write the tables (" in err and "No space left" in err
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]
