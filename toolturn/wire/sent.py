"""What one answer put on the socket, and when: the recording's account of a response.

The server notes each write as it returns (`SentResponse.wrote`): the status line, the body bytes
and the stream events they carried, on the recording's clock. What the recording says a response
sent is read from these notes (`sent_parts`), never from the model's plan, so a stream the client
closed after an `event: error`, or the server's own failure mid-stream, keeps the blocks and calls
that went out before it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

ABORTED = "aborted"  # the ending of an answer that never reached its own end


@dataclass(frozen=True, slots=True)
class SentCall:
    """A tool_use block a response carried: its id, name and input as sent, its position among
    the response's content blocks, and when its block stopped (None: never)."""

    tool_use_id: str
    name: str
    block_stop_ns: int | None
    block_index: int | None = None  # None: the call's position among the calls given
    input: Any = None  # the input as sent (None: unknown, or not valid JSON)
    block_start_ns: int | None = None  # when its content_block_start went (None: unknown)


@dataclass(slots=True)
class SentResponse:
    """The writes of one answer; `status` is the status line's once it went out, `ending` how the
    answer ended (`ABORTED` until the server says otherwise)."""

    status: int | None = None
    ending: str = ABORTED
    bytes_sent: int = 0
    first_byte_ns: int | None = None
    events: list[tuple[dict[str, Any], int]] = field(default_factory=list)

    def started(self, status: int) -> None:
        self.status = status

    def wrote(self, at_ns: int, size: int, events: Sequence[dict[str, Any]] = ()) -> None:
        """`size` body bytes (carrying `events`) were handed to the socket at `at_ns`."""
        if size and self.first_byte_ns is None:
            self.first_byte_ns = at_ns
        self.bytes_sent += size
        self.events.extend((event, at_ns) for event in events)

    def unsent(self, size: int) -> None:
        """The last `size` bytes counted never left the server (the connection was cut with
        them still buffered): they are not counted as sent."""
        self.bytes_sent -= size


def sent_parts(
    events: Sequence[dict[str, Any]], times: Sequence[int]
) -> tuple[list[SentCall], int | None]:
    """What a response sent, from its events and the time each went out: its tool calls with
    their block stop times, and when `message_stop` went (None: it never did)."""
    blocks: dict[int, dict[str, Any]] = {}
    inputs: dict[int, str] = {}
    stops: dict[int, int] = {}
    starts: dict[int, int] = {}
    message_stop: int | None = None
    for event, at_ns in zip(events, times, strict=True):
        kind = event.get("type")
        index = event.get("index")
        if kind == "content_block_start" and isinstance(index, int):
            block = event.get("content_block") or {}
            blocks[index] = {"type": block.get("type"), "id": block.get("id"),
                             "name": block.get("name")}
            starts[index] = at_ns
            start_input = block.get("input")
            inputs[index] = json.dumps(start_input) if start_input else ""
        elif kind == "content_block_delta" and index in blocks:
            delta = event.get("delta") or {}
            if delta.get("type") == "input_json_delta":
                inputs[index] += delta.get("partial_json", "")
        elif kind == "content_block_stop" and isinstance(index, int):
            stops[index] = at_ns
        elif kind == "message_stop":
            message_stop = at_ns
    calls = [SentCall(str(block["id"]), str(block["name"]), stops.get(index), index,
                      _input(inputs.get(index, "")), starts[index])
             for index, block in sorted(blocks.items()) if block["type"] == "tool_use"]
    return calls, message_stop


def _input(text: str) -> Any:
    try:
        return json.loads(text) if text else {}
    except ValueError:
        return None  # cut mid-input: no input to compare with
