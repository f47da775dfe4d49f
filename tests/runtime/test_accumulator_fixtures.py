"""Recorded-style SSE fixtures: each decodes and accumulates to its checked-in expected result,
however its bytes are chunked, and agrees with the official SDK on every completed block."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from anthropic._streaming import SSEDecoder as SDKDecoder
from anthropic.lib.streaming._messages import accumulate_event

from toolturn.commands.accumulate import accumulate
from toolturn.wire.sse import SSEDecoder, decode_stream

STREAMS = Path(__file__).parents[1] / "fixtures" / "streams"
FIXTURES = sorted(STREAMS.glob("*.sse"))
# Where the SDK differs by design: it partial-parses bad tool JSON instead of flagging it.
SDK_DIFFERS = {"tool_use_invalid_json.sse"}


def expected(fixture: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(
        fixture.with_suffix(".expected.json").read_text(encoding="utf-8")
    )
    return result


def result_of(body: bytes, chunk_size: int | None = None) -> dict[str, Any]:
    if chunk_size is None:
        events, partial = decode_stream(body)
    else:
        decoder = SSEDecoder()
        events = []
        for offset in range(0, len(body), chunk_size):
            events += decoder.feed(body[offset : offset + chunk_size])
        partial = decoder.close()
    return accumulate(events, partial, "fixture")


def test_every_kind_of_fixture_is_present() -> None:
    assert {fixture.stem for fixture in FIXTURES} == {
        "citations",
        "cut_mid_block",
        "error_mid_stream",
        "pings_crlf",
        "text",
        "thinking",
        "tool_use_invalid_json",
        "tool_use_split",
        "unknown_types",
    }


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda path: path.stem)
@pytest.mark.parametrize("chunk_size", [None, 1, 2, 3, 7, 4096])
def test_fixture_gives_its_expected_result_under_any_chunking(
    fixture: Path, chunk_size: int | None
) -> None:
    assert result_of(fixture.read_bytes(), chunk_size) == expected(fixture)


def test_tool_json_survives_a_split_at_every_byte() -> None:
    # Every two-chunk split of the file, including between the bytes of é, ï and 😀.
    body = (STREAMS / "tool_use_split.sse").read_bytes()
    want = expected(STREAMS / "tool_use_split.sse")
    assert len(body) != len(body.decode("utf-8"))  # the file does hold multi-byte characters
    for cut in range(1, len(body)):
        decoder = SSEDecoder()
        events = decoder.feed(body[:cut]) + decoder.feed(body[cut:])
        assert accumulate(events, decoder.close(), "fixture") == want, f"split at byte {cut}"


def sdk_message(body: bytes) -> dict[str, Any]:
    """The SDK's view of a stream, as its Stream class runs it: pings skipped, an error ends it."""
    snapshot = None
    json_bufs: dict[int, bytes] = {}
    for sse in SDKDecoder().iter_bytes(iter([body])):
        if sse.event == "ping":
            continue
        if sse.event == "error":
            break
        with warnings.catch_warnings():  # the SDK warns while it constructs an unknown block type
            warnings.simplefilter("ignore")
            snapshot = accumulate_event(
                event=sse.json(), current_snapshot=snapshot, json_bufs=json_bufs
            )
    assert snapshot is not None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        message: dict[str, Any] = snapshot.to_dict()
    return message


@pytest.mark.parametrize(
    "fixture", [f for f in FIXTURES if f.name not in SDK_DIFFERS], ids=lambda path: path.stem
)
def test_sdk_agrees_on_every_completed_block(fixture: Path) -> None:
    want = expected(fixture)
    sdk = sdk_message(fixture.read_bytes())
    if sdk.get("stop_details", "absent") is None:
        # The SDK sets it from every message_delta; we keep what the wire carried.
        del sdk["stop_details"]
    # The SDK's snapshot also holds blocks a cut or an error left open; ours never does.
    sdk["content"] = [sdk["content"][block["index"]] for block in want["blocks"]]
    assert sdk == want["message"]


def test_sdk_partial_parses_invalid_tool_json_where_we_flag_it() -> None:
    fixture = STREAMS / "tool_use_invalid_json.sse"
    assert sdk_message(fixture.read_bytes())["content"][0]["input"] == {"path": "x.txt"}
    ours = expected(fixture)["blocks"][0]
    assert ours["message"]["content"][0]["input"] == {}
    assert ours["raw_input"] == '{"path": "x.txt", "content": "unterminated'
    assert ours["input_error"].startswith("tool input is not valid JSON")
