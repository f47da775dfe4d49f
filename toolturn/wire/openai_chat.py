"""The Chat Completions stream, made from the mock model's Messages API stream: one codec for
`toolturn serve` and, later, the simulated model (sans I/O: events in, chunks out).

`ChatChunks.feed(event)` takes the model's events in order and returns the chunks each one
becomes, sent at that event's time (`toolturn.wire.protocols` has the fault table):

    message_start                 a chunk with `delta: {"role": "assistant", "content": ""}`
    text_delta                    a chunk with `delta.content`
    content_block_start tool_use  `delta.tool_calls: [{index, id, type, function: {name,
                                  arguments: ""}}]` (the call's index counts calls, from 0)
    input_json_delta              `delta.tool_calls: [{index, function: {arguments: piece}}]`
    message_delta                 an empty delta with `finish_reason`: `tool_calls` for
                                  tool_use, `stop` for end_turn, `length` for max_tokens
    message_stop                  the usage chunk (`choices: []`) when the request's
                                  `stream_options.include_usage` asks, then `[DONE]`
    error                         `{"error": {...}}` (the openai SDK raises it as an APIError)
    thinking, a block's stop, ping nothing: Chat Completions has no reasoning in its stream,
                                  says nothing per call, and has no keep-alive event

`[DONE]` is `DONE`, not a dict: the wire writes it as `data: [DONE]`. With `include_usage` every
other chunk has `"usage": null`, as the API sends them. `completion()` is the non-streaming
answer once every event is fed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from toolturn.wire.side_endpoints import CREATED_UNIX

DONE: Final = "[DONE]"
FINISH_REASONS = {"tool_use": "tool_calls", "end_turn": "stop", "max_tokens": "length",
                  "stop_sequence": "stop", "pause_turn": "stop", "refusal": "content_filter"}
Chunk = dict[str, Any] | str


def include_usage(request: Mapping[str, Any]) -> bool:
    options = request.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


class ChatChunks:
    """One response's Chat Completions chunks from its Messages events (the module's table)."""

    def __init__(self, message_id: str, model: str, request: Mapping[str, Any]) -> None:
        self.id = f"chatcmpl-{message_id.removeprefix('msg_')}"
        self._model = model
        self._usage_chunk = include_usage(request)
        self._text: list[str] = []
        self._calls: list[dict[str, Any]] = []
        self._finish: str | None = None
        self._usage = {"prompt_tokens": 0, "completion_tokens": 0}
        self._block = ""  # the type of the block being streamed

    def feed(self, event: Mapping[str, Any]) -> list[Chunk]:
        kind = event["type"]
        if kind == "message_start":
            self._usage["prompt_tokens"] = int(event["message"]["usage"]["input_tokens"])
            return [self._chunk({"role": "assistant", "content": "", "refusal": None})]
        if kind == "content_block_start":
            return self._start(event["content_block"])
        if kind == "content_block_delta":
            return self._delta(event["delta"])
        if kind == "message_delta":
            self._usage["completion_tokens"] = int(event["usage"]["output_tokens"])
            self._finish = FINISH_REASONS.get(str(event["delta"].get("stop_reason")), "stop")
            return [self._chunk({}, self._finish)]
        if kind == "message_stop":
            if not self._usage_chunk:
                return [DONE]
            return [{**self._head(), "choices": [], "usage": self.usage()}, DONE]
        if kind == "error":
            error = event["error"]
            return [{"error": {"message": error["message"], "type": "server_error",
                               "param": None, "code": None}}]
        return []  # ping, content_block_stop

    def usage(self) -> dict[str, int]:
        used = self._usage
        return {**used, "total_tokens": used["prompt_tokens"] + used["completion_tokens"]}

    def completion(self) -> dict[str, Any]:
        """The `chat.completion` object the events fed so far amount to."""
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self._text) or None,
                                   "refusal": None}
        if self._calls:
            message["tool_calls"] = self._calls
        return {**self._head("chat.completion"),
                "choices": [{"index": 0, "message": message, "logprobs": None,
                             "finish_reason": self._finish}],
                "usage": self.usage()}

    def _head(self, kind: str = "chat.completion.chunk") -> dict[str, Any]:
        return {"id": self.id, "object": kind, "created": CREATED_UNIX, "model": self._model,
                "system_fingerprint": None}

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        chunk = {**self._head(), "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                              "finish_reason": finish}]}
        if self._usage_chunk:
            chunk["usage"] = None
        return chunk

    def _start(self, block: Mapping[str, Any]) -> list[Chunk]:
        self._block = str(block["type"])
        if self._block != "tool_use":
            return []
        call = {"id": block["id"], "type": "function",
                "function": {"name": block["name"], "arguments": ""}}
        self._calls.append(call)
        first = {"index": len(self._calls) - 1, **call, "function": dict(call["function"])}
        return [self._chunk({"tool_calls": [first]})]

    def _delta(self, delta: Mapping[str, Any]) -> list[Chunk]:
        if delta["type"] == "text_delta" and delta["text"]:
            self._text.append(delta["text"])
            return [self._chunk({"content": delta["text"]})]
        if delta["type"] == "input_json_delta" and delta["partial_json"]:
            self._calls[-1]["function"]["arguments"] += delta["partial_json"]
            piece = {"index": len(self._calls) - 1,
                     "function": {"arguments": delta["partial_json"]}}
            return [self._chunk({"tool_calls": [piece]})]
        return []  # thinking, signatures, the opening empty delta of a call
