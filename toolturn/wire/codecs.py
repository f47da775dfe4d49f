"""One codec per wire protocol: what `toolturn.wire.server` needs to answer a request in it.

The mock model speaks the Messages API. A codec says, for its protocol, how a request body is
decoded and checked (with the API's 400 wording), the Messages-shaped body the model sees
(so one conversation gets the same draws in every protocol), the pairing violations the API
refuses (`pairing_problems`: each with its message and the parameter the API names),
how the model's error is worded and which status it has, how each of the model's
stream events is framed on the wire (at that event's time), and the non-streaming answer.

    CODECS[path]    the codec of a model endpoint: /v1/messages, /v1/responses,
                    /v1/chat/completions
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from toolturn.model.api_errors import error_body
from toolturn.model.response import StreamResponse
from toolturn.runtime.accumulator import StreamAccumulator
from toolturn.runtime.pairing import TranscriptShapeError, check_pairing
from toolturn.runtime.strict_json import parse_json
from toolturn.wire import openai_chat_request, openai_errors, openai_responses_request
from toolturn.wire.openai_chat import DONE, ChatChunks, Chunk
from toolturn.wire.openai_errors import NOT_JSON, Problem
from toolturn.wire.openai_responses import ResponsesEvents, stop_reason_of
from toolturn.wire.request_shape import request_problem
from toolturn.wire.sse import encode_event

Frames = Callable[[dict[str, Any]], bytes]
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

ANTHROPIC = "anthropic"
OPENAI_RESPONSES = "openai-responses"
OPENAI_CHAT = "openai-chat"


def final_message(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The Message a complete stream amounts to (what a non-streaming request answers)."""
    accumulator = StreamAccumulator()
    for event in events:
        accumulator.feed(event)
    return accumulator.snapshot()


def _parsed(data: bytes) -> tuple[Any, str | None]:
    try:
        return parse_json(data.decode("utf-8")), None
    except ValueError as error:  # UnicodeDecodeError included
        return None, str(error)


def _data_line(payload: Any) -> bytes:
    # backslashreplace: lone surrogates stay JSON escapes (`toolturn.wire.sse`'s reason).
    return f"data: {_ENCODE(payload)}\n\n".encode("utf-8", "backslashreplace")


class MessagesCodec:
    """The Anthropic Messages API: the model's own protocol, passed through."""

    name = ANTHROPIC
    request_id_header = "request-id"

    def decoded(self, data: bytes) -> tuple[Any, Problem | None]:
        body, error = _parsed(data)
        if error is not None:
            return None, Problem(f"request body is not valid JSON: {error}")
        problem = request_problem(body)
        return body, None if problem is None else Problem(problem)

    def messages_body(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        return body

    def pairing_problems(self, body: Mapping[str, Any],
                         seen: Mapping[str, Any]) -> list[Problem]:
        try:
            return [Problem(message) for message in check_pairing(seen["messages"])]
        except TranscriptShapeError as error:
            return [Problem(str(error))]

    def error(self, status: int, error_type: str, message: str,
              request_id: str, problem: Problem | None = None) -> tuple[int, dict[str, Any]]:
        return status, error_body(error_type, message, request_id)

    def frames(self, response: StreamResponse, body: Mapping[str, Any]) -> Frames:
        return encode_event

    def final(self, response: StreamResponse, body: Mapping[str, Any]) -> dict[str, Any]:
        return final_message(response.events)


class _OpenAICodec:
    """What the two OpenAI protocols share: errors, decoding."""

    name = ""
    request_id_header = openai_errors.REQUEST_ID_HEADER

    def _problem(self, body: Any) -> Problem | None:
        raise NotImplementedError

    def pairing_problems(self, body: Mapping[str, Any],
                         seen: Mapping[str, Any]) -> list[Problem]:
        raise NotImplementedError

    def decoded(self, data: bytes) -> tuple[Any, Problem | None]:
        body, error = _parsed(data)
        if error is not None:
            return None, Problem(NOT_JSON)
        return body, self._problem(body)

    def error(self, status: int, error_type: str, message: str,
              request_id: str, problem: Problem | None = None) -> tuple[int, dict[str, Any]]:
        if problem is not None:
            return status, openai_errors.body(problem.message, error_type, problem.param,
                                              problem.code)
        return openai_errors.from_messages(status, error_type, message)


class ResponsesCodec(_OpenAICodec):
    """The OpenAI Responses API (`POST /v1/responses`)."""

    name = OPENAI_RESPONSES

    def _problem(self, body: Any) -> Problem | None:
        return openai_responses_request.request_problem(body)

    def messages_body(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        return openai_responses_request.messages_body(body)

    def pairing_problems(self, body: Mapping[str, Any],
                         seen: Mapping[str, Any]) -> list[Problem]:
        return openai_responses_request.pairing(body)

    def encoder(self, response: StreamResponse, body: Mapping[str, Any]) -> ResponsesEvents:
        """The response's Responses events, made as its Messages events are fed."""
        blocks = sum(1 for event in response.events if event["type"] == "content_block_start")
        return ResponsesEvents(response.message_id, response.model, body,
                               stop_reason_of(response.events), blocks)

    def frames(self, response: StreamResponse, body: Mapping[str, Any]) -> Frames:
        events = self.encoder(response, body)
        return lambda event: b"".join(encode_event(out) for out in events.feed(event))

    def final(self, response: StreamResponse, body: Mapping[str, Any]) -> dict[str, Any]:
        events = self.encoder(response, body)
        for event in response.events:
            events.feed(event)
        return events.response()


def _chunk_bytes(chunk: Chunk) -> bytes:
    return b"data: [DONE]\n\n" if chunk == DONE else _data_line(chunk)


class ChatCodec(_OpenAICodec):
    """OpenAI Chat Completions (`POST /v1/chat/completions`)."""

    name = OPENAI_CHAT

    def _problem(self, body: Any) -> Problem | None:
        return openai_chat_request.request_problem(body)

    def messages_body(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        return openai_chat_request.messages_body(body)

    def pairing_problems(self, body: Mapping[str, Any],
                         seen: Mapping[str, Any]) -> list[Problem]:
        return openai_chat_request.pairing(body)

    def encoder(self, response: StreamResponse, body: Mapping[str, Any]) -> ChatChunks:
        """The response's chunks, made as its Messages events are fed."""
        return ChatChunks(response.message_id, response.model, body)

    def frames(self, response: StreamResponse, body: Mapping[str, Any]) -> Frames:
        chunks = self.encoder(response, body)
        return lambda event: b"".join(_chunk_bytes(chunk) for chunk in chunks.feed(event))

    def final(self, response: StreamResponse, body: Mapping[str, Any]) -> dict[str, Any]:
        chunks = self.encoder(response, body)
        for event in response.events:
            chunks.feed(event)
        return chunks.completion()


Codec = MessagesCodec | ResponsesCodec | ChatCodec
MESSAGES = MessagesCodec()
CODECS: dict[str, Codec] = {
    "/v1/messages": MESSAGES,
    "/v1/responses": ResponsesCodec(),
    "/v1/chat/completions": ChatCodec(),
}
