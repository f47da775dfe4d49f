"""A probe case's fault: one change, at one exact point, to the model's answer of one turn.

The scenario's random faults fire wherever their draws fall, and a draw depends on the session,
which over the wire depends on the client. A probe needs the same fault at the same point for
every client: so a case's model runs without faults, and its `FaultPlan` rewrites the answer to
turn `turn` for attempts up to `attempts` (1: the first only; a retry is then answered clean).

Kinds (`block` is the content block's `index`):

- `none`: nothing changes (the clean cases);
- `http_status`: the answer is that status (529 overloaded, 429, 500) with the API's body;
- `cut_before_first_block`: the connection drops after `message_start`;
- `cut_after_block`: it drops right after block `block`'s `content_block_stop`;
- `cut_in_tool_json`: it drops inside block `block`'s JSON, after its first fragment;
- `error_before_blocks` / `error_after_block`: an `event: error` (overloaded_error) takes the
  place of what follows `message_start` / block `block`'s stop;
- `stall_after_message_start` / `stall_after_block`: silence for `stall_s` seconds (model
  time), then the rest of the stream;
- `malformed_tool_json`: block `block`'s JSON loses its closing brace;
- `unknown_tool`: block `block` calls a tool nobody declared (`UNKNOWN_TOOL`);
- `invalid_tool_input`: block `block`'s input is `{}`, which lacks every required field;
- `duplicate_tool_id`: block `block` gets the id of the tool_use before it;
- `max_tokens_in_tool_use`: the stream stops inside block `block`'s JSON with stop reason
  `max_tokens`, the block closed (`with_block_stop`) or not;
- `end_turn_with_tool_use`: a response with tool calls says `end_turn`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from typing import Any, Literal

from toolturn.model.api_errors import STATUS_ERRORS, error_body, error_event
from toolturn.model.response import HttpError, Response, StreamResponse, Turn

FaultKind = Literal[
    "none", "http_status", "cut_before_first_block", "cut_after_block", "cut_in_tool_json",
    "error_before_blocks", "error_after_block", "stall_after_message_start", "stall_after_block",
    "malformed_tool_json", "unknown_tool", "invalid_tool_input", "duplicate_tool_id",
    "max_tokens_in_tool_use", "end_turn_with_tool_use",
]
UNKNOWN_TOOL = "undefined_tool"
NS_PER_S = 1_000_000_000


@dataclass(frozen=True, slots=True)
class FaultPlan:
    kind: FaultKind = "none"
    turn: int = 0
    attempts: int = 1
    block: int = 0
    status: int = 529
    stall_s: float = 30.0
    with_block_stop: bool = False

    def applies(self, turn: Turn) -> bool:
        return self.kind != "none" and turn.turn_index == self.turn and turn.attempt <= (
            self.attempts)

    def __call__(self, turn: Turn, response: Response) -> Response:
        """`response` with the fault applied, if `turn` is the one it strikes."""
        if not self.applies(turn) or isinstance(response, HttpError):
            return response
        if self.kind == "http_status":
            error_type, message = STATUS_ERRORS[self.status]
            request_id = str(response.message_id).replace("msg_", "req_", 1)
            return HttpError(self.status, error_body(error_type, message, request_id),
                             at_ns=response.times[0], retry_after_ns=NS_PER_S
                             if self.status in (429, 529) else None, faults=(self.kind,))
        rewritten = _REWRITES[self.kind](self, response)
        return replace(rewritten, faults=(self.kind,), tool_stops=_tool_stops(rewritten.events))


def _tool_stops(events: list[dict[str, Any]]) -> tuple[int, ...]:
    """Where the tool_use blocks of rewritten events stop (`StreamResponse.tool_stops`)."""
    stops = []
    tool_blocks: set[int] = set()
    for position, event in enumerate(events):
        kind = event.get("type")
        if kind == "content_block_start":
            if event["content_block"].get("type") == "tool_use":
                tool_blocks.add(event["index"])
        elif kind == "content_block_stop" and event.get("index") in tool_blocks:
            stops.append(position)
    return tuple(stops)


def _find(events: list[dict[str, Any]], kind: str, index: int | None = None) -> int:
    for position, event in enumerate(events):
        if event.get("type") == kind and (index is None or event.get("index") == index):
            return position
    raise ValueError(f"the scripted response has no {kind} for block {index}")


def _cut_after(response: StreamResponse, position: int) -> StreamResponse:
    return replace(response, times=response.times[:position + 1],
                   events=response.events[:position + 1], end_ns=response.times[position],
                   ending="cut")


def _error_after(response: StreamResponse, position: int) -> StreamResponse:
    at = response.times[position]
    return replace(response, times=[*response.times[:position + 1], at],
                   events=[*response.events[:position + 1],
                           error_event("overloaded_error", "Overloaded")],
                   end_ns=at, ending="error_event")


def _stall_after(response: StreamResponse, position: int, stall_s: float) -> StreamResponse:
    gap = round(stall_s * NS_PER_S)
    times = [t if i <= position else t + gap for i, t in enumerate(response.times)]
    return replace(response, times=times, end_ns=response.end_ns + gap)


def _first_json(plan: FaultPlan, events: list[dict[str, Any]]) -> int:
    start = _find(events, "content_block_start", plan.block)
    for position in range(start + 1, len(events)):
        delta = events[position].get("delta") or {}
        if events[position].get("index") == plan.block and delta.get("partial_json"):
            return position
    raise ValueError(f"block {plan.block} has no JSON to cut")


def _edited(response: StreamResponse) -> tuple[StreamResponse, list[dict[str, Any]]]:
    events = copy.deepcopy(response.events)
    return replace(response, events=events), events


def _max_tokens(plan: FaultPlan, response: StreamResponse) -> StreamResponse:
    inside = _first_json(plan, response.events)
    events = copy.deepcopy(response.events[:inside + 1])
    times = response.times[:inside + 1]
    tail: list[dict[str, Any]] = []
    if plan.with_block_stop:
        tail.append({"type": "content_block_stop", "index": plan.block})
    delta = copy.deepcopy(response.events[_find(response.events, "message_delta")])
    delta["delta"]["stop_reason"] = "max_tokens"
    tail += [delta, {"type": "message_stop"}]
    at = times[-1]
    return replace(response, events=events + tail, times=times + [at] * len(tail), end_ns=at)


def _rewrite_block(plan: FaultPlan, response: StreamResponse) -> StreamResponse:
    edited, events = _edited(response)
    start = _find(events, "content_block_start", plan.block)
    block = events[start]["content_block"]
    if plan.kind == "unknown_tool":
        block["name"] = UNKNOWN_TOOL
    elif plan.kind == "duplicate_tool_id":
        earlier = [e["content_block"]["id"] for e in events[:start]
                   if e.get("type") == "content_block_start"
                   and e["content_block"].get("type") == "tool_use"]
        if not earlier:
            raise ValueError(f"block {plan.block} has no tool_use before it to copy")
        block["id"] = earlier[-1]
    elif plan.kind == "invalid_tool_input":
        parts = [i for i, e in enumerate(events) if e.get("index") == plan.block
                 and (e.get("delta") or {}).get("type") == "input_json_delta"]
        for order, position in enumerate(parts):
            events[position]["delta"]["partial_json"] = "{}" if order == len(parts) - 1 else ""
    elif plan.kind == "malformed_tool_json":
        last = max(i for i, e in enumerate(events) if e.get("index") == plan.block
                   and (e.get("delta") or {}).get("partial_json"))
        events[last]["delta"]["partial_json"] = events[last]["delta"]["partial_json"][:-1]
    return edited


def _end_turn(plan: FaultPlan, response: StreamResponse) -> StreamResponse:
    edited, events = _edited(response)
    events[_find(events, "message_delta")]["delta"]["stop_reason"] = "end_turn"
    return edited


_REWRITES = {
    "cut_before_first_block": lambda p, r: _cut_after(r, _find(r.events, "message_start")),
    "cut_after_block": lambda p, r: _cut_after(r, _find(r.events, "content_block_stop", p.block)),
    "cut_in_tool_json": lambda p, r: _cut_after(r, _first_json(p, r.events)),
    "error_before_blocks": lambda p, r: _error_after(r, _find(r.events, "message_start")),
    "error_after_block": lambda p, r: _error_after(
        r, _find(r.events, "content_block_stop", p.block)),
    "stall_after_message_start": lambda p, r: _stall_after(
        r, _find(r.events, "message_start"), p.stall_s),
    "stall_after_block": lambda p, r: _stall_after(
        r, _find(r.events, "content_block_stop", p.block), p.stall_s),
    "malformed_tool_json": _rewrite_block,
    "unknown_tool": _rewrite_block,
    "invalid_tool_input": _rewrite_block,
    "duplicate_tool_id": _rewrite_block,
    "max_tokens_in_tool_use": _max_tokens,
    "end_turn_with_tool_use": _end_turn,
}
