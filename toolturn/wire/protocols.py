"""Every fault kind of the mock model, as each wire protocol carries it: one table, as data.

The model decides a fault once, on the Messages API's events; each protocol's codec
(`toolturn.wire.codecs`) then says the same events its own way, at the same times, so a fault
strikes at the same point of the same story in every protocol. `FAULTS[kind][protocol]` says what
the client sees; `None` where the protocol cannot express the fault (what is sent instead is in
`INEXPRESSIBLE`). docs/protocols.md shows this table (`markdown_table`; a test keeps the two equal).
"""

from __future__ import annotations

from typing import Final

from toolturn.model.faults import ALL_FAULTS
from toolturn.wire.codecs import ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES

PROTOCOLS: Final = (ANTHROPIC, OPENAI_RESPONSES, OPENAI_CHAT)
HEADINGS: Final = {ANTHROPIC: "Messages API (`/v1/messages`)",
                   OPENAI_RESPONSES: "Responses (`/v1/responses`)",
                   OPENAI_CHAT: "Chat Completions (`/v1/chat/completions`)"}

FAULTS: Final[dict[str, dict[str, str | None]]] = {
    "http_429": {
        ANTHROPIC: "429 `rate_limit_error`, `retry-after`, `retry-after-ms`",
        OPENAI_RESPONSES: "429 `{\"error\": {\"type\": \"requests\", \"code\": "
                          "\"rate_limit_exceeded\"}}`, `retry-after`, `retry-after-ms`",
        OPENAI_CHAT: "as Responses",
    },
    "http_529": {
        ANTHROPIC: "529 `overloaded_error`, `retry-after`, `retry-after-ms`",
        OPENAI_RESPONSES: "503 `server_error` (OpenAI has no 529), `retry-after`, "
                          "`retry-after-ms`",
        OPENAI_CHAT: "as Responses",
    },
    "http_500": {
        ANTHROPIC: "500 `api_error`",
        OPENAI_RESPONSES: "500 `server_error`",
        OPENAI_CHAT: "as Responses",
    },
    "error_overloaded": {
        ANTHROPIC: "`event: error` (`overloaded_error`) in place of the next event; non-streaming: "
                   "529",
        OPENAI_RESPONSES: "an `error` event (`{\"error\": {\"type\": "
                          "\"service_unavailable_error\", \"code\": \"server_is_overloaded\"}}`: "
                          "the openai SDK raises an APIError), then `response.failed` (its "
                          "error the same code); non-streaming: 503",
        OPENAI_CHAT: "a `data: {\"error\": {...}}` chunk, then the end (the openai SDK raises an "
                     "APIError); non-streaming: 503",
    },
    "error_api": {
        ANTHROPIC: "`event: error` (`api_error`) in place of the next event; non-streaming: 500",
        OPENAI_RESPONSES: "an `error` event (`server_error`), then `response.failed` (code "
                          "`server_error`); non-streaming: 500",
        OPENAI_CHAT: "a `data: {\"error\": {...}}` chunk, then the end; non-streaming: 500",
    },
    "unknown_tool": {
        ANTHROPIC: "a `tool_use` naming a tool the request did not declare",
        OPENAI_RESPONSES: "a `function_call` item naming it",
        OPENAI_CHAT: "a `tool_calls` entry naming it",
    },
    "invalid_tool_input": {
        ANTHROPIC: "a `tool_use` whose input breaks the tool's schema",
        OPENAI_RESPONSES: "a `function_call` whose arguments break it",
        OPENAI_CHAT: "a `tool_calls` entry whose arguments break it",
    },
    "malformed_tool_json": {
        ANTHROPIC: "`input_json_delta`s that never close the object",
        OPENAI_RESPONSES: "`function_call_arguments.delta`s and `.done` with `arguments` that do "
                          "not parse",
        OPENAI_CHAT: "`function.arguments` pieces that do not parse",
    },
    "duplicate_tool_id": {
        ANTHROPIC: "a second `tool_use` with an earlier id",
        OPENAI_RESPONSES: "a second `function_call` with an earlier `call_id` (its item `id` its "
                          "own; the openai SDK's stream helper raises on it)",
        OPENAI_CHAT: "a second `tool_calls` entry (its own `index`) with an earlier `id`",
    },
    "tool_json_continues": {
        ANTHROPIC: "`input_json_delta`s that close the object, then a second object",
        OPENAI_RESPONSES: "`function_call_arguments.delta`s and `.done` with `arguments` of one "
                          "object, then a second: they do not parse",
        OPENAI_CHAT: "`function.arguments` pieces that close an object, then a second (under "
                     "`chat_start = at_parsed_json` a start at the first object misfires)",
    },
    "max_tokens_mid_tool_use": {
        ANTHROPIC: "`stop_reason: max_tokens` with the last `tool_use`'s JSON unfinished",
        OPENAI_RESPONSES: "the last item done with status `incomplete`, then `response.incomplete` "
                          "(`incomplete_details.reason: max_output_tokens`)",
        OPENAI_CHAT: "`finish_reason: length` with the last call's arguments unfinished",
    },
    "end_turn_with_tool_use": {
        ANTHROPIC: "`stop_reason: end_turn` on a response with `tool_use` blocks",
        OPENAI_RESPONSES: None,
        OPENAI_CHAT: "`finish_reason: stop` on a response with `tool_calls`",
    },
    "cut_before_first_block": {
        ANTHROPIC: "the connection drops after `message_start`",
        OPENAI_RESPONSES: "drops after `response.created`, `response.in_progress`",
        OPENAI_CHAT: "drops after the role chunk",
    },
    "cut_mid_text": {
        ANTHROPIC: "drops inside a text block",
        OPENAI_RESPONSES: "drops between `response.output_text.delta`s",
        OPENAI_CHAT: "drops between `delta.content` chunks",
    },
    "cut_mid_tool_json": {
        ANTHROPIC: "drops inside a `tool_use`'s JSON",
        OPENAI_RESPONSES: "drops between `response.function_call_arguments.delta`s",
        OPENAI_CHAT: "drops between a call's `function.arguments` pieces",
    },
    "cut_after_tool_use_stop": {
        ANTHROPIC: "drops right after a `tool_use`'s `content_block_stop`",
        OPENAI_RESPONSES: "drops right after the call's `response.output_item.done`",
        OPENAI_CHAT: None,
    },
    "cut_before_message_stop": {
        ANTHROPIC: "drops after `message_delta`, before `message_stop`",
        OPENAI_RESPONSES: "drops after the last `response.output_item.done`, before "
                          "`response.completed`",
        OPENAI_CHAT: "drops after the `finish_reason` chunk, before the usage chunk and "
                     "`data: [DONE]`",
    },
    "stall": {
        ANTHROPIC: "no bytes for the stall's length (no pings either), then the rest or a drop",
        OPENAI_RESPONSES: "the same silence",
        OPENAI_CHAT: "the same silence",
    },
}

# What a protocol that cannot express a fault is sent instead.
INEXPRESSIBLE: Final[dict[tuple[str, str], str]] = {
    ("end_turn_with_tool_use", OPENAI_RESPONSES): (
        "the Responses API has no stop reason: the response completes with its calls, as "
        "an unfaulted one"),
    ("cut_after_tool_use_stop", OPENAI_CHAT): (
        "Chat Completions says nothing when a call ends: the drop falls after the call's last "
        "arguments piece, which the client cannot tell from a drop inside its JSON"),
}


def markdown_table() -> str:
    """The table as docs/protocols.md shows it."""
    lines = ["| Fault | " + " | ".join(HEADINGS[p] for p in PROTOCOLS) + " |",
             "|" + "---|" * (len(PROTOCOLS) + 1)]
    for kind in ALL_FAULTS:
        cells = []
        for protocol in PROTOCOLS:
            said = FAULTS[kind][protocol]
            cells.append(f"not expressible: {INEXPRESSIBLE[kind, protocol]}" if said is None
                         else said)
        lines.append(f"| `{kind}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
