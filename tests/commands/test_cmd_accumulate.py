"""`toolturn accumulate FILE`: SSE or JSONL in, the accumulator's result as JSON out, bad input
exit 2."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from toolturn.cli import main
from toolturn.wire.sse import decode_stream

STREAMS = Path(__file__).parents[1] / "fixtures" / "streams"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    status = main(["accumulate", *argv])
    captured = capsys.readouterr()
    return status, json.loads(captured.out) if status == 0 else captured.out, captured.err


def jsonl_of(fixture: str) -> str:
    events, _ = decode_stream((STREAMS / fixture).read_bytes())
    return "\n".join(json.dumps(event) for event in events) + "\n"


def test_sse_file_prints_blocks_message_and_usage(capsys: pytest.CaptureFixture[str]) -> None:
    status, result, _ = run(capsys, str(STREAMS / "tool_use_split.sse"))
    assert status == 0
    assert result == json.loads(
        (STREAMS / "tool_use_split.expected.json").read_text(encoding="utf-8")
    )
    assert [block["index"] for block in result["blocks"]] == [0, 1, 2]
    assert {block["message_id"] for block in result["blocks"]} == {"msg_tools"}
    assert result["stop_reason"] == "tool_use" and result["usage"]["output_tokens"] == 88


def test_jsonl_gives_the_same_result_as_sse(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text(jsonl_of("thinking.sse"), encoding="utf-8")
    status, result, _ = run(capsys, str(path))
    assert status == 0
    assert result == json.loads((STREAMS / "thinking.expected.json").read_text(encoding="utf-8"))


def test_dash_reads_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    stdin = io.TextIOWrapper(
        io.BytesIO((STREAMS / "cut_mid_block.sse").read_bytes()), encoding="utf-8"
    )
    monkeypatch.setattr(sys, "stdin", stdin)
    status, result, _ = run(capsys, "-")
    assert status == 0
    assert result["open_blocks"] == [2] and result["finished"] is False
    assert result["partial_event"]["event"] == "content_block_delta"


def test_error_event_is_reported(capsys: pytest.CaptureFixture[str]) -> None:
    status, result, _ = run(capsys, str(STREAMS / "error_mid_stream.sse"))
    assert status == 0
    assert result["error"] == {"type": "overloaded_error", "message": "Overloaded"}


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"", "empty file"),
        (b"event: ping\ndata: {oops\n\n", "line 2: data is not JSON"),
        (b'{"type": "message_start"\n', "line 1: not JSON"),
        (b'{"type": "ping"}\n[1]\n', "line 2: an event must be a JSON object"),
        (
            b'{"type": "content_block_stop", "index": 0}\n',
            "event 1: content_block_stop event before message_start",
        ),
        (b": just a comment\n", "no message_start"),
        (b'{"type": "ping"}\n\xff\n', "not UTF-8"),
        # Read as nan and printed back as `NaN`, which is not JSON.
        (b'data: {"type": "ping", "n": NaN}\n\n', "line 1: data is not JSON (NaN is not valid"),
        # RecursionError tracebacks.
        (b"data: " + b"[" * 100_000 + b"\n\n", "line 1: data is not JSON (nesting too deep)"),
        (b'{"a":' * 100_000 + b"\n", "line 1: not JSON (nesting too deep)"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: bytes, says: str
) -> None:
    path = tmp_path / "stream"
    path.write_bytes(content)
    status, out, err = run(capsys, str(path))
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1 and says in err and str(path) in err


def test_missing_file_is_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, _, err = run(capsys, str(tmp_path / "absent.sse"))
    assert status == 2 and "cannot read" in err


def stream_with(block: dict[str, Any], delta: dict[str, Any]) -> str:
    events = [
        {"type": "message_start", "message": {"id": "msg_1", "content": []}},
        {"type": "content_block_start", "index": 0, "content_block": block},
        {"type": "content_block_delta", "index": 0, "delta": delta},
        {"type": "content_block_stop", "index": 0},
    ]
    return "\n".join(json.dumps(event) for event in events) + "\n"


def test_a_lone_surrogate_is_printed_as_its_json_escape(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Printing the text raised UnicodeEncodeError: UTF-8 cannot encode a lone surrogate.
    path = tmp_path / "events.jsonl"
    delta = {"type": "text_delta", "text": "Reading \ud800 files."}
    path.write_text(stream_with({"type": "text", "text": ""}, delta), encoding="ascii")
    status = main(["accumulate", str(path)])
    out = capsys.readouterr().out
    assert status == 0 and '"Reading \\ud800 files."' in out
    assert json.loads(out)["message"]["content"] == [
        {"type": "text", "text": "Reading \ud800 files."}
    ]


def test_a_tool_input_out_of_a_doubles_range_is_an_input_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # 1e999 was parsed as inf and printed as `Infinity`: the output was not JSON.
    path = tmp_path / "events.jsonl"
    block = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}
    delta = {"type": "input_json_delta", "partial_json": '{"a": 1e999}'}
    path.write_text(stream_with(block, delta), encoding="utf-8")
    status = main(["accumulate", str(path)])
    out = capsys.readouterr().out
    assert status == 0 and "Infinity" not in out
    (done,) = json.loads(out)["blocks"]
    assert done["input_error"] == "tool input is not valid JSON: 1e999 is out of a double's range"
    assert (done["message"]["content"][0]["input"], done["raw_input"]) == ({}, '{"a": 1e999}')
