"""The non-streaming retry after a mid-stream `event: error` (CLI 2.1.328, issue 30; the
claude-code profile's choice until CLI 2.1.337, which streams it): a profile may say so, and a
non-streaming answer reaches the loop as the events it would have streamed
(`toolturn.runtime.message_events`)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.loop_tools import TOOLS
from toolturn.runtime.accumulator import StreamAccumulator
from toolturn.runtime.commands import SendRequest, StartTool
from toolturn.runtime.loop import ToolTurnLoop
from toolturn.runtime.message_events import message_events
from toolturn.runtime.recovery import CLAUDE_CODE, DEFAULT, RetryTransport

MESSAGE: dict[str, Any] = {
    "id": "msg_1", "type": "message", "role": "assistant", "model": "m",
    "content": [
        {"type": "thinking", "thinking": "Look first.", "signature": "sig"},
        {"type": "text", "text": "I will read it."},
        {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"path": "/a", "n": [1]}},
    ],
    "stop_reason": "tool_use", "stop_sequence": None,
    "usage": {"input_tokens": 12, "output_tokens": 34, "cache_read_input_tokens": 5},
}


def test_a_message_as_events_accumulates_to_the_message() -> None:
    accumulator = StreamAccumulator()
    for event in message_events(MESSAGE):
        accumulator.feed(event)
    assert accumulator.snapshot() == MESSAGE


def test_the_events_are_the_apis_shapes() -> None:
    events = message_events(MESSAGE)
    assert [e["type"] for e in events[:1] + events[-2:]] == [
        "message_start", "message_delta", "message_stop"]
    assert events[0]["message"]["content"] == [] and events[0]["message"]["usage"][
        "output_tokens"] == 0
    assert events[-2]["usage"] == {"output_tokens": 34}
    start = next(e for e in events if e.get("content_block", {}).get("type") == "tool_use")
    assert start["content_block"]["input"] == {}


def test_not_a_message_is_refused() -> None:
    with pytest.raises(ValueError, match="not a Message"):
        message_events({"type": "error", "error": {}})


def test_the_loop_runs_the_calls_of_a_message_fed_as_events() -> None:
    loop = ToolTurnLoop(TOOLS, model="m", profile="claude-code")
    [send] = loop.start("go", 0)
    assert isinstance(send, SendRequest)
    events = message_events({**MESSAGE, "content": MESSAGE["content"][1:]})
    commands, taken = loop.on_events(events, [10] * len(events), send.request_id)
    started = [c for c in commands if isinstance(c, StartTool)]
    assert [c.tool_use_id for c in started] == ["toolu_1"] and taken <= len(events)


def test_the_profiles_say_how_a_retry_after_an_error_event_goes() -> None:
    # 2.1.328 retried without streaming (issue 30); 2.1.337 streams (2026-12-07).
    assert CLAUDE_CODE.retry_after_error_event is RetryTransport.STREAMING
    assert DEFAULT.retry_after_error_event is RetryTransport.STREAMING
