"""When each tool call of a response becomes known complete on each wire protocol, and the
Messages-shaped stream that tells the loop so at that instant.

The loop is Messages-shaped (its transcripts, pairing and repair stay one shape); what differs
between the protocols is only *when* a runtime can know a call complete (issue 34):

- ``anthropic``: at the call's ``content_block_stop``.
- ``openai-responses``: at its ``function_call`` item's ``response.output_item.done``, which the
  wire codec sends with the block's stop (the same instant): the stream is unchanged.
- ``openai-chat``: nothing says so per call (`toolturn.runtime.openai.chat` rule 3). Under
  ``chat_start = "at_next_call"`` a call is complete when the next call's ``index`` begins (the
  next tool_use block's start) or at ``finish_reason`` (the ``message_delta``). Under
  ``"at_parsed_json"`` it is started as soon as its arguments so far parse as a JSON object
  (`toolturn.runtime.openai.object_watch`); when more than whitespace follows, that start was a
  *misfire*, and the call is started again when it is really complete (at the next call or the
  finish reason).

`retimed` moves each tool_use block's ``content_block_stop`` to that instant (just before the
event that makes the call known, at its time; or just after the parsing delta), so the loop and
its executor start the call then, and nothing else changes: the same events, the same draws. A
call never known complete (the stream cut first) keeps no stop, as a block open at a cut. A
misfired call is fed its stop twice: after the parsing delta (its speculative start, as for any
call), then at its real completion; in between, at the delta that changed its arguments, the
loop is told so (`Retimed.retractions`: the driver calls `ToolTurnLoop.arguments_changed` just
before feeding that delta, which cancels the speculative run and reopens the block), and the
deltas after the parse are fed from then on (the whitespace held back since the parse first).
The calls are counted (`Retimed.misfired`). Mock streams misfire under the model fault
`tool_json_continues` (`toolturn.model.faults`). The
instants are computed once per response from the Messages events (a pure function): a test
proves them equal to the real path, each protocol's wire codec then its accumulator, on every
fault and every shipped scenario's streams.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from toolturn.runtime.openai.object_watch import CHANGED, PARSED, ObjectWatch
from toolturn.runtime.policy import admission_for

__all__ = [
    "CHAT_STARTS", "PROTOCOLS", "CallTiming", "ChatStart", "Protocol", "Retimed", "arm_chat_start",
    "call_timings", "retimed",
]

Protocol = Literal["anthropic", "openai-responses", "openai-chat"]
PROTOCOLS: Final[tuple[Protocol, ...]] = ("anthropic", "openai-responses", "openai-chat")
ChatStart = Literal["at_next_call", "at_parsed_json"]
CHAT_STARTS: Final[tuple[ChatStart, ...]] = ("at_next_call", "at_parsed_json")
_CHAT: Final = "openai-chat"


def arm_chat_start(policy: str, chat_start: str) -> str:
    """The `chat_start` an arm runs under: `chat_start` for a policy that may start a call while
    the response streams (`streaming`); `at_next_call` for those that wait for its end (the
    baselines), which so never speculate (a call is known complete for them, as for the start
    lag, when the next begins or at the finish)."""
    return "at_next_call" if admission_for(policy).waits_for_message_end else chat_start


@dataclass(frozen=True, slots=True)
class CallTiming:
    """One tool_use block's instants, as indices into the response's Messages events.

    `known`: the event before which the call is known complete (None: never, the stream ended
    first); `parsed`: the delta after which its arguments first parsed as an object (speculative
    start only); `changed`: the delta after that which was more than whitespace (a misfire)."""

    block: int
    tool_use_id: str
    stop: int
    known: int | None
    parsed: int | None = None
    changed: int | None = None

    @property
    def misfired(self) -> bool:
        """Whether its speculative start was wrong: its arguments changed after they parsed."""
        return self.changed is not None


@dataclass(frozen=True, slots=True)
class Retimed:
    """A response's stream as the loop is to be fed it under a protocol."""

    events: list[dict[str, Any]]
    times: list[int]
    # Indices in `events` of the tool_use blocks' stops, in order (`StreamResponse.tool_stops`).
    tool_stops: tuple[int, ...]
    # The ids of the calls whose speculative start misfired.
    misfired: tuple[str, ...] = ()
    # Each misfire, in order: (the index in `events` of the delta that changed the call's
    # arguments, its block's index). The loop hears of it just before that delta.
    retractions: tuple[tuple[int, int], ...] = ()


def call_timings(
    events: Sequence[dict[str, Any]], protocol: str, chat_start: str = "at_next_call"
) -> list[CallTiming]:
    """The instants of every tool_use block of `events` that stopped, in stream order."""
    calls: dict[int, dict[str, Any]] = {}  # open tool_use blocks by index
    stopped: list[dict[str, Any]] = []  # stopped, not yet known complete (Chat Completions)
    timings: list[CallTiming] = []
    chat = protocol == _CHAT
    speculative = chat and chat_start == "at_parsed_json"
    for position, event in enumerate(events):
        kind = event["type"]
        if chat and stopped and (kind == "message_delta" or (
                kind == "content_block_start" and event["content_block"]["type"] == "tool_use")):
            timings += [_timing(call, position) for call in stopped]
            stopped = []
        if kind == "content_block_start" and event["content_block"]["type"] == "tool_use":
            parts: list[str] = []
            calls[event["index"]] = {
                "block": event["index"], "id": event["content_block"]["id"], "parts": parts,
                "watch": ObjectWatch(parts) if speculative else None,
                "parsed": None, "changed": None,
            }
        elif kind == "content_block_delta" and event["index"] in calls:
            _watch(calls[event["index"]], event["delta"], position)
        elif kind == "content_block_stop" and event["index"] in calls:
            call = calls.pop(event["index"])
            call["stop"] = position
            if chat:
                stopped.append(call)
            else:
                timings.append(_timing(call, position))
    timings += [_timing(call, None) for call in stopped]
    return sorted(timings, key=lambda timing: timing.stop)


def _watch(call: dict[str, Any], delta: dict[str, Any], position: int) -> None:
    watch = call["watch"]
    piece = delta.get("partial_json")
    if watch is None or delta.get("type") != "input_json_delta" or not piece:
        return
    call["parts"].append(piece)
    signal = watch.feed(piece)
    if signal == PARSED:
        call["parsed"] = position
    elif signal == CHANGED:
        call["changed"] = position


def _timing(call: dict[str, Any], known: int | None) -> CallTiming:
    return CallTiming(call["block"], call["id"], call["stop"], known, call["parsed"],
                      call["changed"])


def retimed(
    events: list[dict[str, Any]], times: list[int], protocol: str,
    chat_start: str = "at_next_call",
) -> Retimed | None:
    """The stream the loop is fed under `protocol` (module docstring); None when it is the
    Messages stream itself (the Messages API, Responses, or no tool call to move)."""
    if protocol != _CHAT:
        return None
    timings = call_timings(events, protocol, chat_start)
    if not timings:
        return None
    moved = {timing.stop for timing in timings}
    # Where each stop goes: before event `known` (a start at the parsed delta: after it; a
    # misfire, both), and the changing deltas, each with its block.
    before: dict[int, list[int]] = {}
    after: dict[int, list[int]] = {}
    # The changing deltas: each one's block, and the whitespace deltas before it (held back
    # while the block is stopped, fed after the retraction).
    changes: dict[int, tuple[int, list[int]]] = {}
    swallowed: set[int] = set()  # whitespace after a parse: fed with nothing to say, or later
    for timing in timings:
        if timing.parsed is not None:
            after.setdefault(timing.parsed, []).append(timing.stop)
            trailing = _trailing_deltas(events, timing)
            if timing.changed is None:
                swallowed.update(trailing)
                continue
            held = [position for position in trailing if position < timing.changed]
            swallowed.update(held)
            changes[timing.changed] = (timing.block, held)
        if timing.known is not None:
            before.setdefault(timing.known, []).append(timing.stop)
        # else never known complete: its (real) stop is dropped, as at a cut
    out_events: list[dict[str, Any]] = []
    out_times: list[int] = []
    stops: list[int] = []
    retractions: list[tuple[int, int]] = []
    for position, event in enumerate(events):
        for stop in before.get(position, ()):
            stops.append(len(out_events))
            out_events.append(events[stop])
            out_times.append(times[position])
        if position in changes:
            block, held = changes[position]
            retractions.append((len(out_events), block))
            out_events += [events[held_at] for held_at in held]
            out_times += [times[position]] * len(held)
        if position not in moved and position not in swallowed:
            out_events.append(event)
            out_times.append(times[position])
        for stop in after.get(position, ()):
            stops.append(len(out_events))
            out_events.append(events[stop])
            out_times.append(times[position])
    misfired = tuple(timing.tool_use_id for timing in timings if timing.misfired)
    return Retimed(out_events, out_times, tuple(stops), misfired, tuple(retractions))


def _trailing_deltas(events: Sequence[dict[str, Any]], timing: CallTiming) -> list[int]:
    """The deltas of the call's block after its parse (whitespace only up to a change): the
    loop's block is stopped at the parse, so they are left out (until a change reopens it)."""
    assert timing.parsed is not None
    return [
        position for position in range(timing.parsed + 1, timing.stop)
        if events[position]["type"] == "content_block_delta"
        and events[position]["index"] == timing.block
    ]
