"""Build scripted Messages API streams and push them through the runtime with fake integer time.

A stream is a plain list of event dicts, in the shape the API sends them:

    events = [
        message_start("msg_1"),
        *text_block(0, "Let me look."),
        *tool_use_block(1, "toolu_1", "Read", {"path": "/a"}),
        *message_end("tool_use"),
    ]

`feed(loop, events, start_ns, step_ns)` delivers them one per `step_ns` and returns every
command with the time it was returned.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from toolturn.runtime.commands import SendRequest
from toolturn.runtime.loop import ToolTurnLoop

Event = dict[str, Any]
T = TypeVar("T")


def message_start(
    message_id: str = "msg_1", model: str = "model-a", input_tokens: int = 10
) -> Event:
    return {
        "type": "message_start",
        "message": {
            "id": message_id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": 1},
        },
    }


def _chunks(text: str, parts: int) -> list[str]:
    size = max(1, -(-len(text) // parts))
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


def text_block(index: int, text: str, parts: int = 2) -> list[Event]:
    return [
        {"type": "content_block_start", "index": index,
         "content_block": {"type": "text", "text": ""}},
        *({"type": "content_block_delta", "index": index,
           "delta": {"type": "text_delta", "text": chunk}}
          for chunk in _chunks(text, parts)),
        {"type": "content_block_stop", "index": index},
    ]


def tool_use_block(
    index: int, tool_use_id: str, name: str, tool_input: dict[str, Any] | str, parts: int = 3,
    *, stop: bool = True,
) -> list[Event]:
    """A tool_use block whose input JSON arrives in `parts` chunks; a str input is sent as
    given (to send broken JSON). `stop=False` leaves the block open (a cut or max_tokens)."""
    raw = tool_input if isinstance(tool_input, str) else json.dumps(tool_input)
    events: list[Event] = [
        {"type": "content_block_start", "index": index,
         "content_block": {"type": "tool_use", "id": tool_use_id, "name": name, "input": {}}},
        *({"type": "content_block_delta", "index": index,
           "delta": {"type": "input_json_delta", "partial_json": chunk}}
          for chunk in _chunks(raw, parts)),
    ]
    if stop:
        events.append({"type": "content_block_stop", "index": index})
    return events


def message_end(stop_reason: str, output_tokens: int = 20) -> list[Event]:
    return [
        {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
         "usage": {"output_tokens": output_tokens}},
        {"type": "message_stop"},
    ]


def error_event(error_type: str = "overloaded_error", message: str = "Overloaded") -> Event:
    return {"type": "error", "error": {"type": error_type, "message": message}}


def text_response(message_id: str, text: str) -> list[Event]:
    return [message_start(message_id), *text_block(0, text), *message_end("end_turn")]


def feed(
    loop: ToolTurnLoop, events: list[Event], start_ns: int, step_ns: int = 10
) -> list[tuple[int, Any]]:
    """Deliver `events` at start_ns, start_ns + step_ns, ...; return (time, command) pairs."""
    out: list[tuple[int, Any]] = []
    for i, event in enumerate(events):
        now = start_ns + i * step_ns
        out += [(now, command) for command in loop.on_event(event, now)]
    return out


def of_type(kind: type[T], commands: list[Any]) -> list[T]:
    """The commands of one type, from a plain list or from (time, command) pairs."""
    found = []
    for item in commands:
        command = item[1] if isinstance(item, tuple) else item
        if isinstance(command, kind):
            found.append(command)
    return found


# The first user message of a scripted session (`loop.start("go", ...)`), and the read call of
# its responses: what the scripted recovery tests expect in the request after.
PROMPT = {"role": "user", "content": [{"type": "text", "text": "go"}]}
READ_A = {"type": "tool_use", "id": "a", "name": "Read", "input": {"path": "/a"}}


def sent(commands: list[Any]) -> list[dict[str, Any]]:
    """The messages of the one request among `commands`."""
    [send] = of_type(SendRequest, commands)
    return send.request_body["messages"]


def result(tool_use_id: str, content: str, *, is_error: bool = False) -> dict[str, Any]:
    """A tool_result block as the loop hands it over."""
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block
