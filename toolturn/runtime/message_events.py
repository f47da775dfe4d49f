"""A whole Message (a non-streaming answer) as the stream events that would have carried it.

The loop takes a response as events only (`ToolTurnLoop.on_event(s)`). A profile that retries
without streaming (the claude-code profile after a mid-stream `event: error`) has its driver
send the request with `stream: false` and feed the Message through `message_events`, so the
loop and its rules do not change:

    events = message_events(client.messages.create(**body, stream=False).to_dict())
    commands, taken = loop.on_events(events, [now_ns] * len(events), request_id)

Each block becomes its start (empty), one delta holding all of it and its stop; the usage splits
as the API splits it (input figures in `message_start`, output tokens in `message_delta`).
"""

from __future__ import annotations

import json
from typing import Any

# Block fields that a start carries empty and a delta fills in.
_FILLED = {"text": "text", "thinking": "thinking", "tool_use": "input", "server_tool_use": "input"}


def message_events(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The events of a stream that accumulates to `message` (a Messages API Message)."""
    if message.get("type") != "message" or not isinstance(message.get("content"), list):
        raise ValueError("not a Message: it needs type 'message' and a content list")
    usage = dict(message.get("usage") or {})
    output_tokens = usage.pop("output_tokens", 0)
    start = {key: value for key, value in message.items()
             if key not in ("content", "stop_reason", "stop_sequence", "usage")}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": {
        **start, "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {**usage, "output_tokens": 0}}}]
    for index, block in enumerate(message["content"]):
        events += _block_events(index, block)
    events.append({"type": "message_delta",
                   "delta": {"stop_reason": message.get("stop_reason"),
                             "stop_sequence": message.get("stop_sequence")},
                   "usage": {"output_tokens": output_tokens}})
    events.append({"type": "message_stop"})
    return events


def _block_events(index: int, block: dict[str, Any]) -> list[dict[str, Any]]:
    kind = block.get("type")
    field = _FILLED.get(str(kind))
    if field is None:  # redacted thinking, a server tool's result: whole in its start
        return [{"type": "content_block_start", "index": index, "content_block": block},
                {"type": "content_block_stop", "index": index}]
    empty: Any = {} if field == "input" else ""
    start = {**{k: v for k, v in block.items() if k != "signature"}, field: empty}
    deltas: list[dict[str, Any]] = []
    if field == "input":
        deltas.append({"type": "input_json_delta",
                       "partial_json": json.dumps(block.get("input", {}), ensure_ascii=False)})
    elif block.get(field):
        deltas.append({"type": f"{field}_delta", field: block[field]})
    if kind == "thinking" and block.get("signature"):
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
    return [{"type": "content_block_start", "index": index, "content_block": start},
            *({"type": "content_block_delta", "index": index, "delta": delta} for delta in deltas),
            {"type": "content_block_stop", "index": index}]
