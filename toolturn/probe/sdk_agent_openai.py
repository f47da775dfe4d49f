"""The OpenAI half of `toolturn.probe.sdk_agent`: its turns on the official `openai` SDK, in the
Responses API (`responses.stream(...)` and its final response, or `responses.create(stream=
True)` read up to its `response.completed` event) and in Chat Completions
(`chat.completions.stream(...)` and its final completion, or `chat.completions.create(stream=
True)` with its chunks put together here by index, as an SDK user writes it).

A turn's final answer is kept as the plain dict the next request is built from. The agent runs
the calls of a Responses answer that completed (an `incomplete` one, cut by max_output_tokens,
ends its turn) and of a Chat answer whose finish_reason is `tool_calls`; a stream that ends
without its last event (`response.completed`, a `finish_reason`) is a broken stream, retried.
The SDK's stream helpers have their own words for some endings, kept as an SDK user meets
them: `responses.stream` raises RuntimeError for a stream without `response.completed` (an
`incomplete` one too: retried), and `chat.completions.stream` raises LengthFinishReasonError
at finish_reason `length`, which carries the completion (taken as the final answer).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import openai

from toolturn.wire.codecs import OPENAI_CHAT, OPENAI_RESPONSES

Outcome = Callable[[Any, Any], tuple[str, bool]]  # (name, input) -> (content, is_error)
History = list[dict[str, Any]]
_PARAMETERS = {
    "Bash": {"type": "object", "properties": {"command": {"type": "string"},
                                              "description": {"type": "string"}},
             "required": ["command"]},
    "Read": {"type": "object", "properties": {"file_path": {"type": "string"}},
             "required": ["file_path"]},
}
_DESCRIPTIONS = {"Bash": "Run a shell command", "Read": "Read a file"}
RESPONSES_TOOLS = [{"type": "function", "name": name, "description": _DESCRIPTIONS[name],
                    "parameters": schema} for name, schema in _PARAMETERS.items()]
CHAT_TOOLS = [{"type": "function", "function": {"name": name, "description": _DESCRIPTIONS[name],
                                                "parameters": schema}}
              for name, schema in _PARAMETERS.items()]


class BrokenStream(Exception):
    """A stream that ended without its last event, or carried an error event."""


def _arguments(text: Any) -> Any:
    """A call's arguments as an object, or None when they are not JSON (an error result)."""
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return None


# ----- Responses -----

def _responses_params(model: str, history: History) -> dict[str, Any]:
    return {"model": model, "input": history, "tools": RESPONSES_TOOLS}


def _responses_final(event: Any, final: dict[str, Any] | None) -> dict[str, Any] | None:
    if event.type in ("response.completed", "response.incomplete"):
        return dict(event.response.model_dump(exclude_none=True))
    if event.type in ("error", "response.failed"):
        raise BrokenStream(f"{event.type} event")
    return final


def responses_sync(client: openai.OpenAI, mode: str, model: str,
                   history: History) -> dict[str, Any]:
    params = _responses_params(model, history)
    if mode.endswith("stream"):
        with client.responses.stream(**params) as stream:
            return dict(stream.get_final_response().model_dump(exclude_none=True))
    final = None
    with client.responses.create(**params, stream=True) as events:  # closed if one raises
        for event in events:
            final = _responses_final(event, final)
    if final is None:
        raise BrokenStream("no response.completed event")
    return final


async def responses_async(client: openai.AsyncOpenAI, mode: str, model: str,
                          history: History) -> dict[str, Any]:
    params = _responses_params(model, history)
    if mode.endswith("stream"):
        async with client.responses.stream(**params) as stream:
            return dict((await stream.get_final_response()).model_dump(exclude_none=True))
    final = None
    async with await client.responses.create(**params, stream=True) as events:
        async for event in events:
            final = _responses_final(event, final)
    if final is None:
        raise BrokenStream("no response.completed event")
    return final


def responses_calls(final: dict[str, Any]) -> list[dict[str, Any]]:
    """The calls to run: none unless the response completed (status `incomplete`: stop)."""
    if final.get("status") != "completed":
        return []
    return [item for item in final.get("output", []) if item.get("type") == "function_call"]


def responses_next(history: History, final: dict[str, Any], outcome: Outcome) -> History:
    """The input carried on: the output items as sent, then each call's output."""
    results = []
    for call in responses_calls(final):
        content, is_error = outcome(call.get("name"), _arguments(call.get("arguments")))
        results.append({"type": "function_call_output", "call_id": call["call_id"],
                        "output": f"error: {content}" if is_error else content})
    return [*history, *final.get("output", []), *results]


# ----- Chat Completions -----

def _chat_params(model: str, history: History) -> dict[str, Any]:
    return {"model": model, "messages": history, "tools": CHAT_TOOLS}


def _completion(completion: Any) -> dict[str, Any]:
    choice = completion.choices[0]
    return {"message": choice.message.model_dump(exclude_none=True),
            "finish_reason": choice.finish_reason}


class ChunkJoiner:
    """A Chat stream's chunks put together: text, calls by index, the finish_reason."""

    def __init__(self) -> None:
        self.text = ""
        self.calls: list[dict[str, Any]] = []
        self.finish_reason: str | None = None

    def feed(self, chunk: Any) -> None:
        for choice in chunk.choices:
            self.text += choice.delta.content or ""
            for piece in choice.delta.tool_calls or ():
                while len(self.calls) <= piece.index:
                    self.calls.append({"id": "", "type": "function",
                                       "function": {"name": "", "arguments": ""}})
                call = self.calls[piece.index]
                call["id"] = piece.id or call["id"]
                if piece.function is not None:
                    call["function"]["name"] += piece.function.name or ""
                    call["function"]["arguments"] += piece.function.arguments or ""
            self.finish_reason = choice.finish_reason or self.finish_reason

    def final(self) -> dict[str, Any]:
        if self.finish_reason is None:
            raise BrokenStream("no finish_reason")
        message: dict[str, Any] = {"role": "assistant", "content": self.text or None}
        if self.calls:
            message["tool_calls"] = self.calls
        return {"message": message, "finish_reason": self.finish_reason}


def chat_sync(client: openai.OpenAI, mode: str, model: str, history: History) -> dict[str, Any]:
    params = _chat_params(model, history)
    if mode.endswith("stream"):
        try:
            with client.chat.completions.stream(**params) as stream:
                return _completion(stream.get_final_completion())
        except openai.LengthFinishReasonError as error:  # the SDK's word for max_tokens
            return _completion(error.completion)
    joiner = ChunkJoiner()
    with client.chat.completions.create(**params, stream=True,
                                        stream_options={"include_usage": True}) as chunks:
        for chunk in chunks:
            joiner.feed(chunk)
    return joiner.final()


async def chat_async(client: openai.AsyncOpenAI, mode: str, model: str,
                     history: History) -> dict[str, Any]:
    params = _chat_params(model, history)
    if mode.endswith("stream"):
        try:
            async with client.chat.completions.stream(**params) as stream:
                return _completion(await stream.get_final_completion())
        except openai.LengthFinishReasonError as error:
            return _completion(error.completion)
    joiner = ChunkJoiner()
    async with await client.chat.completions.create(
            **params, stream=True, stream_options={"include_usage": True}) as chunks:
        async for chunk in chunks:
            joiner.feed(chunk)
    return joiner.final()


def chat_calls(final: dict[str, Any]) -> list[dict[str, Any]]:
    """The calls to run: none unless the finish_reason is `tool_calls`."""
    if final.get("finish_reason") != "tool_calls":
        return []
    return list(final["message"].get("tool_calls") or ())


def chat_next(history: History, final: dict[str, Any], outcome: Outcome) -> History:
    """The messages carried on: the assistant message as sent, then a tool message per call."""
    results = []
    for call in chat_calls(final):
        function = call.get("function") or {}
        content, is_error = outcome(function.get("name"), _arguments(function.get("arguments")))
        results.append({"role": "tool", "tool_call_id": call["id"],
                        "content": f"error: {content}" if is_error else content})
    return [*history, final["message"], *results]


TURNS = {OPENAI_RESPONSES: (responses_sync, responses_async, responses_calls, responses_next),
         OPENAI_CHAT: (chat_sync, chat_async, chat_calls, chat_next)}
