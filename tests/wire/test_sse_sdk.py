"""The official SDK reads our bytes: its SSE decoder, its accumulator, and its client end to end."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import pytest
from anthropic._streaming import SSEBytesDecoder, SSEDecoder
from anthropic.lib.streaming._messages import accumulate_event

from tests.helpers.runtime_script import message_start
from toolturn.wire.sse import encode_event, encode_stream

START = message_start("msg_sdk", "claude-test")
PING = {"type": "ping"}
TEXT_EVENTS: list[dict[str, Any]] = [
    START,
    PING,
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Grüße, "}},
    PING,
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "😀"}},
    {"type": "content_block_stop", "index": 0},
    {
        "type": "content_block_start",
        "index": 1,
        "content_block": {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}},
    },
    {
        "type": "content_block_delta",
        "index": 1,
        "delta": {"type": "input_json_delta", "partial_json": '{"q": "caf'},
    },
    {
        "type": "content_block_delta",
        "index": 1,
        "delta": {"type": "input_json_delta", "partial_json": '\\u00e9"}'},
    },
    {"type": "content_block_stop", "index": 1},
    {
        "type": "message_delta",
        "delta": {"stop_reason": "tool_use", "stop_sequence": None},
        "usage": {"output_tokens": 7},
    },
    {"type": "message_stop"},
]
ERROR = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


def chunks(body: bytes, size: int) -> Iterator[bytes]:
    return (body[offset : offset + size] for offset in range(0, len(body), size))


def sdk_decode(body: bytes, size: int) -> list[tuple[str | None, Any]]:
    decoder = SSEDecoder()
    assert isinstance(decoder, SSEBytesDecoder)  # the protocol the SDK's streams accept
    return [(sse.event, sse.json()) for sse in decoder.iter_bytes(chunks(body, size))]


@pytest.mark.parametrize("size", [1, 3, 1 << 16])
def test_sdk_decoder_reads_every_event_with_its_name(size: int) -> None:
    events = [*TEXT_EVENTS[:4], ERROR]
    assert sdk_decode(encode_stream(events), size) == [(event["type"], event) for event in events]


def test_sdk_accumulator_builds_the_message_from_our_bytes() -> None:
    snapshot = None
    json_bufs: dict[int, bytes] = {}
    for name, data in sdk_decode(encode_stream(TEXT_EVENTS), 5):
        if name != "ping":  # the SDK's Stream drops pings before accumulating
            snapshot = accumulate_event(event=data, current_snapshot=snapshot, json_bufs=json_bufs)
    assert snapshot is not None
    assert [block.to_dict() for block in snapshot.content] == [
        {"type": "text", "text": "Grüße, 😀"},
        {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"q": "café"}},
    ]
    assert snapshot.stop_reason == "tool_use"
    assert snapshot.usage.output_tokens == 7


def sdk_client(body: bytes) -> anthropic.Anthropic:
    def respond(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            200, headers={"content-type": "text/event-stream"}, content=chunks(body, 7)
        )

    transport = httpx2.MockTransport(respond)
    return anthropic.Anthropic(
        api_key="test", http_client=httpx2.Client(transport=transport), max_retries=0
    )


def stream_final_message(body: bytes) -> Any:
    client = sdk_client(body)
    with client.messages.stream(
        model="claude-test", max_tokens=64, messages=[{"role": "user", "content": "hi"}]
    ) as stream:
        return stream.get_final_message()


def test_sdk_client_streams_our_bytes_with_pings() -> None:
    message = stream_final_message(encode_stream(TEXT_EVENTS))
    assert message.id == "msg_sdk"
    assert message.content[1].input == {"q": "café"}


def test_sdk_client_raises_on_our_error_event() -> None:
    body = encode_stream([*TEXT_EVENTS[:4], ERROR])
    with pytest.raises(anthropic.APIStatusError, match="overloaded_error"):
        stream_final_message(body)


def test_sdk_client_accepts_a_cut_stream() -> None:
    # Cut inside the second tool JSON delta's data line: the SDK drops the unfinished event.
    body = encode_stream(TEXT_EVENTS[:9]) + encode_event(TEXT_EVENTS[9])[:-20]
    message = stream_final_message(body)
    assert message.content[0].text == "Grüße, 😀"
    assert message.stop_reason is None
