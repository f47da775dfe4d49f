"""Request logs in Messages API shape: JSONL, one model request per line.

A line is either a request body as sent to `POST /v1/messages` (an object with `messages`), or an
envelope around one:

    {"session": "s1",                       # optional: which conversation (else see below)
     "sent_at": "2026-12-01T15:39:31.977Z", # optional: ISO 8601, epoch s or ms ("timestamp" too)
     "request": {"model": ..., "messages": [...], ...},
     "response": {"content": [...], "stop_reason": ..., "usage": {...}},   # or:
     "events": [{"type": "message_start", ...}, ...],                     # the streamed events, or:
     "sse": "event: message_start\\ndata: {...}\\n\\n...",                 # the raw SSE text
     "first_event_at": ..., "done_at": ...,  # optional: first event and end of the response
     "error": {"type": "error", "error": {...}} or "overloaded"}   # optional: the request failed

Sessions: the `session` value when given; otherwise requests belong together when they start
with the same first message (an agent's requests all repeat its first prompt). Within a session
lines are taken in file order.

The response, when the line has none, is what the session's next request holds at that place (the
history implies it). Each `tool_use` of a response is answered in the next request; the tool's
duration is then that request's `sent_at` minus this response's `done_at` (an upper bound: the
agent's own work between the two is counted in). A line whose request is not an object with a
list of messages, whose response does not decode, or whose times are not times is skipped and
reported with its line number.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolturn.runtime.accumulator import StreamAccumulator, StreamProtocolError
from toolturn.traces.logged import LoggedSession, Step, describe_api_error, tool_call_of
from toolturn.traces.skipped import Skipped
from toolturn.traces.timestamps import epoch_ms
from toolturn.wire.sse import SSEDecodeError, decode_stream


class _LineError(ValueError):
    pass


@dataclass(slots=True)
class _Entry:
    where: str
    session: str
    request: dict[str, Any]
    response: dict[str, Any] | None
    sent_ms: float | None
    first_ms: float | None
    done_ms: float | None
    error: str | None


def _time(line: dict[str, Any], *keys: str) -> float | None:
    for key in keys:
        if line.get(key) is not None:
            try:
                return epoch_ms(line[key])
            except ValueError as error:
                raise _LineError(f"bad timestamp: {key}: {error}") from None
    return None


def _from_events(events: list[Any]) -> dict[str, Any]:
    accumulator = StreamAccumulator()
    for event in events:
        if not isinstance(event, dict):
            raise _LineError("bad response: events: every event must be an object")
        try:
            accumulator.feed(event)
        except StreamProtocolError as error:
            raise _LineError(f"bad response: events: {error}") from None
    return accumulator.snapshot()


def _response(line: dict[str, Any]) -> dict[str, Any] | None:
    if "response" in line and line["response"] is not None:
        response = line["response"]
        if not isinstance(response, dict) or not isinstance(response.get("content"), list):
            raise _LineError("bad response: must be a message object with a 'content' list")
        return response
    if "events" in line:
        if not isinstance(line["events"], list):
            raise _LineError("bad response: events: must be a list of stream events")
        return _from_events(line["events"])
    if "sse" in line:
        if not isinstance(line["sse"], str):
            raise _LineError("bad response: sse: must be the raw SSE text")
        try:
            events, _partial = decode_stream(line["sse"].encode("utf-8", "surrogatepass"))
        except SSEDecodeError as error:
            raise _LineError(f"bad response: sse: {error}") from None
        return _from_events(events)
    return None


def _session_key(request: dict[str, Any]) -> str:
    first = request["messages"][0] if request["messages"] else {}
    return "first:" + json.dumps(first, sort_keys=True)[:4096]


def _entry(line: dict[str, Any], where: str) -> _Entry:
    envelope = "request" in line
    request = line["request"] if envelope else line
    if not isinstance(request, dict) or not isinstance(request.get("messages"), list):
        raise _LineError("not a request: expected an object with a 'messages' list")
    if not all(isinstance(m, dict) for m in request["messages"]):
        raise _LineError("not a request: every message must be an object")
    if not envelope:
        return _Entry(where, _session_key(request), request, None, None, None, None, None)
    session = line.get("session")
    if session is not None and (isinstance(session, bool) or not isinstance(session, str | int)):
        raise _LineError("bad session: must be a string or a number")
    error = line.get("error")
    return _Entry(
        where=where,
        session=str(session) if session is not None else _session_key(request),
        request=request,
        response=_response(line),
        sent_ms=_time(line, "sent_at", "timestamp"),
        first_ms=_time(line, "first_event_at"),
        done_ms=_time(line, "done_at"),
        error=None if error is None else describe_api_error(error),
    )



def _is_prompt(messages: list[dict[str, Any]]) -> bool:
    """Whether a request's last message is a user prompt rather than tool results."""
    if not messages or messages[-1].get("role") != "user":
        return False
    content = messages[-1].get("content")
    if isinstance(content, str):
        return True
    return isinstance(content, list) and not any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


class RequestLogReader:
    def __init__(self, skipped: Skipped) -> None:
        self.skipped = skipped

    def read(self, path: Path, lines: list[tuple[int, dict[str, Any]]]) -> list[LoggedSession]:
        entries: dict[str, list[_Entry]] = {}
        for number, line in lines:
            try:
                entry = _entry(line, f"{path}:{number}")
            except _LineError as error:
                self.skipped.add(str(path), number, str(error))
                continue
            entries.setdefault(entry.session, []).append(entry)
        sessions = []
        for index, (key, group) in enumerate(entries.items()):
            name = f"{path.stem}#{index + 1}" if key.startswith("first:") else key
            sessions.append(_session(str(path), name, group))
        return sessions


def _session(source: str, name: str, entries: list[_Entry]) -> LoggedSession:
    session = LoggedSession(source, name)
    for position, entry in enumerate(entries):
        messages = entry.request["messages"]
        if _is_prompt(messages) or not session.prompts_ms:
            session.prompts_ms.append(entry.sent_ms)
        response = entry.response
        following = entries[position + 1] if position + 1 < len(entries) else None
        if response is None and following is not None and entry.error is None:
            implied = following.request["messages"]
            if len(implied) > len(messages) and implied[len(messages)].get("role") == "assistant":
                content = implied[len(messages)].get("content")
                response = {"content": content if isinstance(content, list) else []}
        step = Step(
            where=entry.where,
            messages=messages,
            prompt_index=len(session.prompts_ms) - 1,
            sent_ms=entry.sent_ms,
            first_block_ms=entry.first_ms,
            last_block_ms=entry.done_ms,
            api_error=entry.error,
        )
        if response is not None:
            _fill(step, response, entry, following)
        session.steps.append(step)
    return session


def _fill(
    step: Step, response: dict[str, Any], entry: _Entry, following: _Entry | None
) -> None:
    step.blocks = [b for b in response.get("content") or [] if isinstance(b, dict)]
    step.stop_reason = response.get("stop_reason")
    step.model = response.get("model") or entry.request.get("model")
    usage = response.get("usage")
    if isinstance(usage, dict):
        if isinstance(usage.get("output_tokens"), int):
            step.output_tokens = usage["output_tokens"]
        if isinstance(usage.get("input_tokens"), int):
            step.input_tokens = usage["input_tokens"]
    results = _results_in(following, len(entry.request["messages"]) + 1)
    for block in step.blocks:
        if block.get("type") != "tool_use":
            continue
        call = tool_call_of(block, entry.where, entry.done_ms)
        result = results.get(call.tool_use_id)
        if result is not None and following is not None:
            call.result_ms = following.sent_ms
            content = result.get("content")
            call.result_text = content if isinstance(content, str) else json.dumps(content)
            call.is_error = result.get("is_error") is True
        step.tool_calls.append(call)


def _results_in(entry: _Entry | None, index: int) -> dict[str, dict[str, Any]]:
    """The tool_result blocks of message `index` of `entry`'s request, by tool_use id."""
    if entry is None or index >= len(entry.request["messages"]):
        return {}
    content = entry.request["messages"][index].get("content")
    if not isinstance(content, list):
        return {}
    return {
        str(b.get("tool_use_id")): b
        for b in content
        if isinstance(b, dict) and b.get("type") == "tool_result"
    }
