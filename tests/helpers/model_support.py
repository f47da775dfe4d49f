"""Shared helpers of the mock model's tests: the default catalogue's tools, a model, requests,
the events of a response, the SDK's view of a stream."""

from __future__ import annotations

import json
from typing import Any

from anthropic._streaming import SSEDecoder as SDKDecoder
from anthropic.lib.streaming._messages import accumulate_event

from toolturn.model.config import ModelConfig
from toolturn.model.model import MockModel
from toolturn.model.response import HttpError, Response, StreamResponse, Turn
from toolturn.model.tool_inputs import tool_inputs
from toolturn.runtime.accumulator import StreamAccumulator
from toolturn.tools.catalogue import catalogue

Event = dict[str, Any]
SPECS = {spec.name: spec for spec in catalogue("default")}
TOOLS = tool_inputs(SPECS.values())
SEED = 20261130

# One text block, then two Read calls: one unit of each per-block fault, two tool calls.
TEXT_AND_TWO_CALLS = {
    "kind": "explicit",
    "responses": [
        {
            "blocks": [
                {"type": "text", "text": "Let me read both files before I change anything."},
                {"type": "tool_use", "name": "Read", "input": {"file_path": "/repo/a.py"}},
                {
                    "type": "tool_use",
                    "name": "Read",
                    "input": {"file_path": "/repo/b.py", "offset": 10, "limit": 200},
                },
            ]
        }
    ],
}
# A transcript whose last assistant turn called a tool, answered: every request is legal and a
# duplicate id always has an earlier id to copy.
PREVIOUS_ID = "toolu_01previousPreviousPrev"
MESSAGES = [
    {"role": "user", "content": "Fix the bug."},
    {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": PREVIOUS_ID, "name": "Glob", "input": {"pattern": "*.py"}}
        ],
    },
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": PREVIOUS_ID, "content": "a.py"}],
    },
]


def one_call_script(name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    """An explicit script whose every response is one call of `name`."""
    block = {"type": "tool_use", "name": name, "input": tool_input}
    return {"kind": "explicit", "responses": [{"blocks": [block]}]}


def tool_use_starts(events: list[Event]) -> list[Event]:
    return [block for block in block_starts(events) if block["type"] == "tool_use"]


def make_model(seed: int = SEED, **config: Any) -> MockModel:
    return MockModel(ModelConfig.model_validate(config), seed, TOOLS)


def body(model: MockModel, **extra: Any) -> dict[str, Any]:
    return {"model": model.name, "max_tokens": 8192, "messages": MESSAGES, **extra}


def respond(
    model: MockModel, session: int, turn: int = 1, attempt: int = 0, **extra: Any
) -> Response:
    return model.respond(body(model, **extra), Turn(session, turn, attempt))


def stream_of(response: Response) -> StreamResponse:
    assert isinstance(response, StreamResponse), response
    return response


def http_error_of(response: Response) -> HttpError:
    assert isinstance(response, HttpError), response
    return response


def events_of(response: Response) -> list[Event]:
    return stream_of(response).events


def timed(response: StreamResponse) -> list[tuple[int, Event]]:
    """A stream's events as `(t_ns, event)` pairs."""
    return list(zip(response.times, response.events, strict=True))


def without_pings(events: list[Event]) -> list[Event]:
    return [event for event in events if event["type"] != "ping"]


def feed_ours(events: list[Event]) -> StreamAccumulator:
    accumulator = StreamAccumulator()
    for event in events:
        accumulator.feed(event)
    return accumulator


def sdk_snapshot(sse_body: bytes) -> dict[str, Any]:
    """What the SDK makes of the bytes: its decoder, then `accumulate_event`, skipping pings as
    its `Stream` does (an `error` event makes its Stream raise, so streams here carry none)."""
    snapshot = None
    json_bufs: dict[int, bytes] = {}
    for sse in SDKDecoder().iter_bytes(iter([sse_body])):
        assert sse.event != "error"
        if sse.event != "ping":
            snapshot = accumulate_event(
                event=sse.json(), current_snapshot=snapshot, json_bufs=json_bufs
            )
    assert snapshot is not None
    message: dict[str, Any] = snapshot.to_dict()
    if message.get("stop_details", "absent") is None:
        del message["stop_details"]  # the SDK sets it from every message_delta; ours carry none
    return message


def json_pieces(events: list[Event], index: int) -> list[str]:
    """The partial_json of block `index`'s deltas, in order."""
    return [
        e["delta"]["partial_json"]
        for e in events
        if e["type"] == "content_block_delta" and e["index"] == index
    ]


def tool_json_of(events: list[Event], index: int) -> str:
    return "".join(json_pieces(events, index))


def block_starts(events: list[Event]) -> list[Event]:
    return [e["content_block"] for e in events if e["type"] == "content_block_start"]


def stop_reason(events: list[Event]) -> str | None:
    deltas = [e for e in events if e["type"] == "message_delta"]
    return deltas[-1]["delta"]["stop_reason"] if deltas else None


def parses(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True
