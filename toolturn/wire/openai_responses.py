"""The Responses API's stream, made from the mock model's Messages API stream: one codec for
`toolturn serve` and, later, the simulated model (sans I/O: events in, events out).

`ResponsesEvents.feed(event)` takes the model's events in order and returns the Responses
events each one becomes, sent at that event's time, so every fault strikes at the same point
of the same story (`toolturn.wire.protocols` has the table):

    message_start                 response.created, response.in_progress
    content_block_start text      response.output_item.added (message), response.content_part.added
    text_delta                    response.output_text.delta
    content_block_stop (text)     response.output_text.done, response.content_part.done,
                                  response.output_item.done
    thinking start / delta / stop a `reasoning` item: response.output_item.added,
                                  response.reasoning_summary_part.added,
                                  response.reasoning_summary_text.delta, ... .done,
                                  response.output_item.done (the signature as encrypted_content)
    content_block_start tool_use  response.output_item.added (function_call; call_id = the id)
    input_json_delta              response.function_call_arguments.delta (an empty one: nothing)
    content_block_stop (tool_use) response.function_call_arguments.done, response.output_item.done
    message_delta, ping           nothing (the Responses API has no keep-alive event)
    message_stop                  response.completed; response.incomplete for max_tokens
    error                         error (the error nested, as the API sends it), then
                                  response.failed (`toolturn.wire.openai_errors.STREAM_ERRORS`:
                                  `server_is_overloaded` or `server_error`)

Every event has its `sequence_number`, from 0. Items and the response carry ids made from the
model's message id (`resp_`, `msg_`, `fc_`, `rs_` + its suffix and the output index), and a fixed
`created_at`: the same request gets the same bytes. `response()` is the response object as it
stands: the non-streaming answer once every event is fed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolturn.wire.openai_errors import STREAM_ERRORS
from toolturn.wire.side_endpoints import CREATED_UNIX


@dataclass(slots=True)
class _Item:
    kind: str  # "message", "reasoning" or "function_call"
    id: str
    text: str = ""  # a message's text, a reasoning summary, a call's arguments
    call_id: str = ""
    name: str = ""
    encrypted: str | None = None
    status: str = "in_progress"

    def snapshot(self) -> dict[str, Any]:
        if self.kind == "message":
            content = [] if self.status == "in_progress" else [_text_part(self.text)]
            return {"id": self.id, "type": "message", "status": self.status,
                    "role": "assistant", "content": content}
        if self.kind == "reasoning":
            summary = [] if self.status == "in_progress" else [_summary_part(self.text)]
            return {"id": self.id, "type": "reasoning", "summary": summary,
                    "encrypted_content": self.encrypted}
        return {"id": self.id, "type": "function_call", "status": self.status,
                "call_id": self.call_id, "name": self.name, "arguments": self.text}


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def _summary_part(text: str) -> dict[str, Any]:
    return {"type": "summary_text", "text": text}


def stop_reason_of(events: list[dict[str, Any]]) -> str | None:
    """The stop reason of a Messages stream (its message_delta's), None if it has none."""
    for event in reversed(events):
        if event["type"] == "message_delta":
            return str(event["delta"].get("stop_reason"))
    return None


class ResponsesEvents:
    """One response's Responses events from its Messages events (the module's table).
    `stop_reason` is the stream's (`stop_reason_of`) and `blocks` how many content blocks it
    starts: under max_tokens the last block is the one cut short, which ends as an `incomplete`
    item (its own stop event cannot tell). `request` is the client's Responses body, whose
    settings the response object repeats."""

    def __init__(self, message_id: str, model: str, request: Mapping[str, Any],
                 stop_reason: str | None = None, blocks: int = 0) -> None:
        self._suffix = message_id.removeprefix("msg_")
        self.id = f"resp_{self._suffix}"
        self._model = model
        self._request = request
        self._stop_reason = stop_reason
        self._cut_short = blocks - 1 if stop_reason == "max_tokens" else None
        self._items: list[_Item] = []
        self._sequence = 0
        self._status = "in_progress"
        self._usage: dict[str, int] = {"input_tokens": 0, "output_tokens": 0}
        self._error: dict[str, Any] | None = None

    def feed(self, event: Mapping[str, Any]) -> list[dict[str, Any]]:
        kind = event["type"]
        if kind == "message_start":
            self._usage["input_tokens"] = int(event["message"]["usage"]["input_tokens"])
            return [self._event("response.created", response=self.response()),
                    self._event("response.in_progress", response=self.response())]
        if kind == "content_block_start":
            return self._start(event["content_block"])
        if kind == "content_block_delta":
            return self._delta(event["delta"])
        if kind == "content_block_stop":
            return self._stop()
        if kind == "message_delta":
            self._usage["output_tokens"] = int(event["usage"]["output_tokens"])
            return []
        if kind == "message_stop":
            if self._stop_reason == "max_tokens":
                self._status = "incomplete"
                return [self._event("response.incomplete", response=self.response())]
            self._status = "completed"
            return [self._event("response.completed", response=self.response())]
        if kind == "error":
            error_type, code, message = STREAM_ERRORS.get(event["error"]["type"],
                                                          STREAM_ERRORS["api_error"])
            self._status = "failed"
            self._error = {"code": code, "message": message}
            return [self._event("error", error={"type": error_type, "code": code,
                                                "message": message, "param": None}),
                    self._event("response.failed", response=self.response())]
        return []  # ping

    def response(self) -> dict[str, Any]:
        """The response object as it stands."""
        request = self._request
        usage = None
        if self._status != "in_progress":
            used = self._usage
            usage = {"input_tokens": used["input_tokens"],
                     "input_tokens_details": {"cached_tokens": 0},
                     "output_tokens": used["output_tokens"],
                     "output_tokens_details": {"reasoning_tokens": 0},
                     "total_tokens": used["input_tokens"] + used["output_tokens"]}
        incomplete = {"reason": "max_output_tokens"} if self._status == "incomplete" else None
        return {
            "id": self.id, "object": "response", "created_at": CREATED_UNIX,
            "status": self._status, "background": False, "error": self._error,
            "incomplete_details": incomplete, "instructions": request.get("instructions"),
            "max_output_tokens": request.get("max_output_tokens"), "model": self._model,
            "output": [item.snapshot() for item in self._items],
            "parallel_tool_calls": request.get("parallel_tool_calls", True),
            "previous_response_id": None, "reasoning": request.get("reasoning"),
            "store": request.get("store", True), "temperature": request.get("temperature", 1.0),
            "text": {"format": {"type": "text"}}, "tool_choice": request.get("tool_choice", "auto"),
            "tools": request.get("tools", []), "top_p": request.get("top_p", 1.0),
            "truncation": "disabled", "usage": usage, "user": None, "metadata": {},
        }

    # ----- items -----

    def _event(self, kind: str, **fields: Any) -> dict[str, Any]:
        event = {"type": kind, "sequence_number": self._sequence, **fields}
        self._sequence += 1
        return event

    def _where(self) -> dict[str, Any]:
        return {"item_id": self._items[-1].id, "output_index": len(self._items) - 1}

    def _start(self, block: Mapping[str, Any]) -> list[dict[str, Any]]:
        index = len(self._items)
        if block["type"] == "tool_use":
            item = _Item("function_call", f"fc_{self._suffix}_{index}", call_id=block["id"],
                         name=block["name"])
        elif block["type"] == "thinking":
            item = _Item("reasoning", f"rs_{self._suffix}_{index}")
        else:
            item = _Item("message", f"msg_{self._suffix}_{index}")
        self._items.append(item)
        events = [self._event("response.output_item.added", output_index=index,
                              item=item.snapshot())]
        if item.kind == "message":
            events.append(self._event("response.content_part.added", **self._where(),
                                      content_index=0, part=_text_part("")))
        elif item.kind == "reasoning":
            events.append(self._event("response.reasoning_summary_part.added", **self._where(),
                                      summary_index=0, part=_summary_part("")))
        return events

    def _delta(self, delta: Mapping[str, Any]) -> list[dict[str, Any]]:
        item = self._items[-1]
        kind = delta["type"]
        if kind == "signature_delta":
            item.encrypted = str(delta["signature"])
            return []
        piece = str(delta.get("text", delta.get("thinking", delta.get("partial_json", ""))))
        if not piece:
            return []  # the opening empty delta of a tool_use: nothing to say
        item.text += piece
        if kind == "input_json_delta":
            return [self._event("response.function_call_arguments.delta", **self._where(),
                                delta=piece)]
        if kind == "thinking_delta":
            return [self._event("response.reasoning_summary_text.delta", **self._where(),
                                summary_index=0, delta=piece)]
        return [self._event("response.output_text.delta", **self._where(), content_index=0,
                            delta=piece, logprobs=[])]

    def _stop(self) -> list[dict[str, Any]]:
        item = self._items[-1]
        where = self._where()
        item.status = "incomplete" if where["output_index"] == self._cut_short else "completed"
        events: list[dict[str, Any]] = []
        if item.kind == "function_call":
            events.append(self._event("response.function_call_arguments.done", **where,
                                      name=item.name, arguments=item.text))
        elif item.kind == "reasoning":
            events += [self._event("response.reasoning_summary_text.done", **where,
                                   summary_index=0, text=item.text),
                       self._event("response.reasoning_summary_part.done", **where,
                                   summary_index=0, part=_summary_part(item.text))]
        else:
            events += [self._event("response.output_text.done", **where, content_index=0,
                                   text=item.text, logprobs=[]),
                       self._event("response.content_part.done", **where, content_index=0,
                                   part=_text_part(item.text))]
        events.append(self._event("response.output_item.done", output_index=where["output_index"],
                                  item=item.snapshot()))
        return events
