"""Warm the SDK before a live run's clock starts.

The first request a process makes through the `anthropic` SDK costs 130 to 165 ms more than the
later ones: the SDK builds its pydantic validators and `httpx2`/`anthropic` import modules lazily
on first use. A live run whose sessions start at once would see that cost in its first requests'
time to first event, and a concurrent start queues them behind it on the one event loop, so
`toolturn live` and `toolturn fidelity` would measure the process, not the model. One request
answered in memory (no server, no network) with a stream of every kind of event the model sends pays
it before any session's clock starts.
"""

from __future__ import annotations

from typing import Any

from toolturn.live.in_memory_sdk import in_memory_client, read_events
from toolturn.wire.sse import encode_stream

_TOOL = {"name": "Read", "description": "Read a file.",
         "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}
_BODY: dict[str, Any] = {
    "model": "claude-warm-up", "max_tokens": 64, "stream": True, "tools": [_TOOL],
    "messages": [{"role": "user", "content": "warm up"}],
}
# One of each event and block kind a mock response holds: thinking, text, a tool_use with its
# input JSON in pieces, a ping, the message's delta and stop.
_EVENTS: list[dict[str, Any]] = [
    {"type": "message_start", "message": {
        "id": "msg_warm", "type": "message", "role": "assistant", "model": "claude-warm-up",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1}}},
    {"type": "content_block_start", "index": 0,
     "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
    {"type": "content_block_delta", "index": 0,
     "delta": {"type": "thinking_delta", "thinking": "Hm."}},
    {"type": "content_block_delta", "index": 0,
     "delta": {"type": "signature_delta", "signature": "c2ln"}},
    {"type": "content_block_stop", "index": 0},
    {"type": "ping"},
    {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Ok."}},
    {"type": "content_block_stop", "index": 1},
    {"type": "content_block_start", "index": 2, "content_block": {
        "type": "tool_use", "id": "toolu_warm", "name": "Read", "input": {}}},
    {"type": "content_block_delta", "index": 2,
     "delta": {"type": "input_json_delta", "partial_json": "{\"path\": "}},
    {"type": "content_block_delta", "index": 2,
     "delta": {"type": "input_json_delta", "partial_json": "\"a\"}"}},
    {"type": "content_block_stop", "index": 2},
    {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
     "usage": {"output_tokens": 9}},
    {"type": "message_stop"},
]


async def warm_up_sdk() -> int:
    """Make one streaming request through the SDK, answered in memory, and read it as the live
    driver reads a response (each event as a dict). Returns the number of events read."""
    async with in_memory_client(encode_stream(_EVENTS)) as client:
        return await read_events(await client.messages.create(**_BODY))
