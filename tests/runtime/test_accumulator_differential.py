"""Differential test: random legal streams, through our SSE codec and accumulator and through the
official SDK's decoder and ``accumulate_event``, give the same message."""

from __future__ import annotations

import json
from typing import Any

from anthropic._streaming import SSEDecoder as SDKDecoder
from anthropic.lib.streaming._messages import accumulate_event
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.json_strategies import json_objects, split_text
from tests.helpers.runtime_script import message_start
from toolturn.runtime.accumulator import StreamAccumulator, merge_block_messages
from toolturn.wire.sse import decode_stream, encode_stream

Event = dict[str, Any]

citations = st.builds(
    lambda text, start: {
        "type": "char_location",
        "cited_text": text,
        "document_index": 0,
        "document_title": None,
        "start_char_index": start,
        "end_char_index": start + len(text),
        "file_id": None,
    },
    st.text(max_size=10),
    st.integers(min_value=0, max_value=1000),
)


@st.composite
def block_events(draw: st.DrawFn, index: int) -> list[Event]:
    """One block's start, deltas and stop."""
    kind = draw(
        st.sampled_from(
            ["text", "text_cited", "thinking", "redacted_thinking", "tool_use", "server_tool_use"]
        )
    )

    def d(**fields: Any) -> Event:
        return {"type": "content_block_delta", "index": index, "delta": fields}

    deltas: list[Event]
    if kind in ("text", "text_cited"):
        block: Event = {"type": "text", "text": ""}
        deltas = [
            d(type="text_delta", text=part) for part in draw(split_text(draw(st.text(max_size=40))))
        ]
        if kind == "text_cited":
            for citation in draw(st.lists(citations, min_size=1, max_size=3)):
                deltas.insert(
                    draw(st.integers(0, len(deltas))), d(type="citations_delta", citation=citation)
                )
    elif kind == "thinking":
        block = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [
            d(type="thinking_delta", thinking=part)
            for part in draw(split_text(draw(st.text(max_size=40))))
        ]
        for signature in draw(st.lists(st.text(min_size=1, max_size=10), max_size=2)):
            deltas.append(d(type="signature_delta", signature=signature))
    elif kind == "redacted_thinking":
        block = {"type": "redacted_thinking", "data": draw(st.text(min_size=1, max_size=20))}
        deltas = []
    else:
        if kind == "tool_use":
            block = {
                "type": kind,
                "id": f"toolu_{index}",
                "name": draw(st.sampled_from(["read", "grep"])),
                "input": {},
            }
        else:
            block = {"type": kind, "id": f"srvtoolu_{index}", "name": "web_search", "input": {}}
        raw = json.dumps(draw(json_objects), ensure_ascii=draw(st.booleans()))
        deltas = [d(type="input_json_delta", partial_json=part) for part in draw(split_text(raw))]
    start = {"type": "content_block_start", "index": index, "content_block": block}
    return [start, *deltas, {"type": "content_block_stop", "index": index}]


@st.composite
def streams(draw: st.DrawFn) -> list[Event]:
    """A legal stream, with pings sprinkled in, possibly cut short (no message_stop)."""
    events: list[Event] = [
        message_start(
            f"msg_{draw(st.integers(0, 10**6))}", "claude-test", draw(st.integers(0, 10**5))
        )
    ]
    for index in range(draw(st.integers(0, 4))):
        events += draw(block_events(index))
    usage: Event = {"output_tokens": draw(st.integers(0, 10**5))}
    if draw(st.booleans()):
        usage["cache_read_input_tokens"] = draw(st.integers(0, 10**4))
    reason = draw(st.sampled_from(["end_turn", "tool_use", "max_tokens", "stop_sequence"]))
    sequence = "##" if reason == "stop_sequence" else None
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": reason, "stop_sequence": sequence},
            "usage": usage,
        }
    )
    events.append({"type": "message_stop"})
    for _ in range(draw(st.integers(0, 3))):
        # Never after message_stop.
        events.insert(draw(st.integers(1, len(events) - 1)), {"type": "ping"})
    if draw(st.booleans()):
        events = events[: draw(st.integers(1, len(events)))]
    return events


def ours(body: bytes) -> StreamAccumulator:
    events, _ = decode_stream(body)
    accumulator = StreamAccumulator()
    for event in events:
        accumulator.feed(event)
    return accumulator


def sdks(body: bytes) -> dict[str, Any]:
    snapshot = None
    json_bufs: dict[int, bytes] = {}
    for sse in SDKDecoder().iter_bytes(iter([body])):
        if sse.event != "ping":  # as the SDK's Stream does
            snapshot = accumulate_event(
                event=sse.json(), current_snapshot=snapshot, json_bufs=json_bufs
            )
    assert snapshot is not None
    message: dict[str, Any] = snapshot.to_dict()
    return message


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams())
def test_merged_messages_equal_the_sdks(events: list[Event]) -> None:
    body = encode_stream(events)
    accumulator = ours(body)
    sdk = sdks(body)
    if sdk.get("stop_details", "absent") is None:
        # The SDK sets it from every message_delta; the wire did not carry it.
        del sdk["stop_details"]
    completed = sorted(done.index for done in accumulator.completed)
    # On a cut the SDK's snapshot keeps the open block; ours holds completed blocks only.
    assert completed == list(range(len(completed)))
    assert accumulator.open_indices == tuple(range(len(completed), len(sdk["content"])))
    sdk["content"] = sdk["content"][: len(completed)]
    assert accumulator.snapshot() == sdk
    merged = merge_block_messages(accumulator.completed)
    assert merged == ([{"role": "assistant", "content": sdk["content"]}] if completed else [])
