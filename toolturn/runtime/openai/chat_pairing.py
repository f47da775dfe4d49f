"""The Chat Completions API's rules for tool pairing in a request's `messages`, and a checker
worded as the API.

Messages have a role: `system`, `developer`, `user`, `assistant`, `tool` or `function` (the
legacy form, passed over). An assistant message may carry `tool_calls`, each with an `id`; a
`tool` message answers one by its `tool_call_id`. The API accepts the messages only if:

1. the tool messages right after an assistant message with `tool_calls` (its "run": the tool
   messages up to the first message of another role) answer each of its ids ("An assistant
   message with 'tool_calls' must be followed by tool messages responding to each
   'tool_call_id'. The following tool_call_ids did not have response messages: IDS", said where
   the run ends);
2. every tool message is in such a run and answers an id of that assistant message ("Invalid
   parameter: messages with role 'tool' must be a response to a preceeding message with
   'tool_calls'.", the API's spelling).

These are the wire server's rules (`toolturn.wire.openai_chat_request.pairing`), worded the same
and in the same order. Two more are ours (the API does not refuse them, but they break "every call
answered once"): tool call ids are unique in the whole conversation, and a call has one tool
message.

The classifier reads the messages as segments: an assistant message and every message up to the
next assistant one (and a leading segment before the first). Within a segment it tells a tool
message that answers in the run from one that answers a call of the segment's assistant but
comes late (after a user or system message: rule 2 refuses it, and the repair moves it up), a
second answer to a call, and an orphan. Input that is not a list of messages raises
`toolturn.runtime.pairing.TranscriptShapeError` naming the place, e.g. `messages[3]: ...`.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolturn.runtime.pairing import TranscriptShapeError

__all__ = [
    "ROLES",
    "Segment",
    "ToolVerdict",
    "call_ids",
    "check_chat_pairing",
    "classify_chat",
    "message_role",
]

ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})

# The API's words (and the wire server's: toolturn/wire/openai_chat_request.py).
MISSING_RESPONSES = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to "
    "each 'tool_call_id'. The following tool_call_ids did not have response messages: {ids}"
)
NO_CALL = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
    "with 'tool_calls'."
)
# No real sample: the API does not refuse these. Our wording, in its style.
DUPLICATE_CALL = (
    "Invalid parameter: 'messages[{index}].tool_calls[{position}]' reuses the tool call id "
    "{id}; each tool call must have its own id."
)
DUPLICATE_RESPONSE = (
    "Invalid parameter: 'messages[{index}]' is a second response to tool_call_id {id}; each "
    "tool call must have exactly one tool message."
)


class ToolVerdict(enum.Enum):
    """What one tool message of a segment is, with what the repair does about it."""

    ANSWER = "answer"  # answers a call of the segment, in the run: kept
    LATE = "late"  # answers one after the run: moved up into the run
    DUPLICATE = "duplicate"  # answers a call answered before: removed
    ORPHAN = "orphan"  # answers no call of the segment: removed


@dataclass(slots=True)
class Segment:
    """An assistant message (`start`; -1 for the messages before the first one) and the
    messages up to the next: its kept call ids in order, the positions in its `tool_calls` of
    calls that reuse an id (removed by the repair), where its run ends, each tool message's
    verdict by index, and the calls nothing in the segment answers."""

    start: int
    calls: list[str] = field(default_factory=list)
    duplicate_calls: list[tuple[int, str]] = field(default_factory=list)
    run_end: int = 0
    tools: dict[int, ToolVerdict] = field(default_factory=dict)
    unanswered: list[str] = field(default_factory=list)

    @property
    def broken(self) -> bool:
        """Whether the repair changes anything in the segment (and the check says anything)."""
        return bool(self.duplicate_calls or self.unanswered) or any(
            verdict is not ToolVerdict.ANSWER for verdict in self.tools.values()
        )


def message_role(message: object, index: int) -> str:
    """The role of `messages[index]`, after checking its shape as far as pairing reads it."""
    if type(message) is not dict and not isinstance(message, Mapping):
        raise TranscriptShapeError(
            f"messages[{index}]: a message must be an object, not {type(message).__name__}"
        )
    role = message.get("role")
    if not isinstance(role, str):
        if role is None:
            raise TranscriptShapeError(f"messages[{index}]: message has no 'role'")
        raise TranscriptShapeError(
            f"messages[{index}].role: must be a string, not {type(role).__name__}"
        )
    if role not in ROLES:
        raise TranscriptShapeError(
            f"messages[{index}].role: {role!r} is not one of {', '.join(sorted(ROLES))}"
        )
    if role == "tool" and not isinstance(message.get("tool_call_id"), str):
        raise TranscriptShapeError(f"messages[{index}]: tool message has no string 'tool_call_id'")
    return role


def call_ids(message: Mapping[str, Any], index: int) -> list[str]:
    """The ids of an assistant message's `tool_calls`, in order (none if it has no list)."""
    calls = message.get("tool_calls")
    if calls is None:
        return []
    if not isinstance(calls, list):
        raise TranscriptShapeError(
            f"messages[{index}].tool_calls: must be a list, not {type(calls).__name__}"
        )
    ids: list[str] = []
    for position, call in enumerate(calls):
        if not isinstance(call, Mapping) or not isinstance(call.get("id"), str):
            raise TranscriptShapeError(
                f"messages[{index}].tool_calls[{position}]: a tool call must be an object with "
                "a string 'id'"
            )
        ids.append(call["id"])
    return ids


def classify_chat(messages: Sequence[Mapping[str, Any]]) -> list[Segment]:
    """The segments of `messages` with their verdicts, in order. Linear in the messages and
    their tool calls."""
    if isinstance(messages, (str, bytes, bytearray)) or not isinstance(messages, Sequence):
        raise TranscriptShapeError(
            f"messages: must be a list, not {type(messages).__name__}"
        )
    segments = [Segment(-1)]
    used: set[str] = set()  # every kept call id so far: ids are unique conversation-wide
    calls: set[str] = set()  # the current segment's calls
    answered: set[str] = set()  # those answered so far
    in_run = False
    for index, message in enumerate(messages):
        role = message_role(message, index)
        segment = segments[-1]
        if role == "assistant":
            _close(segment, answered)
            segment = Segment(index, run_end=index + 1)
            for position, call_id in enumerate(call_ids(message, index)):
                if call_id in used:
                    segment.duplicate_calls.append((position, call_id))
                else:
                    used.add(call_id)
                    segment.calls.append(call_id)
            segments.append(segment)
            calls, answered, in_run = set(segment.calls), set(), True
        elif role == "tool":
            segment.tools[index] = _verdict(message["tool_call_id"], calls, answered, in_run)
            if in_run:
                segment.run_end = index + 1
        else:
            in_run = False
    _close(segments[-1], answered)
    return segments


def _verdict(call_id: str, calls: set[str], answered: set[str], in_run: bool) -> ToolVerdict:
    if call_id in answered:
        return ToolVerdict.DUPLICATE
    if call_id not in calls:
        return ToolVerdict.ORPHAN
    answered.add(call_id)
    return ToolVerdict.ANSWER if in_run else ToolVerdict.LATE


def _close(segment: Segment, answered: set[str]) -> None:
    segment.unanswered = [call_id for call_id in segment.calls if call_id not in answered]


def segment_wording(segment: Segment, messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The API's lines for one segment, in the order it says them: duplicate calls, the run's
    own refusals, the ids the run leaves unanswered, then each tool message after the run."""
    lines = [
        DUPLICATE_CALL.format(index=segment.start, position=position, id=call_id)
        for position, call_id in segment.duplicate_calls
    ]
    after_run: list[str] = []
    answered_in_run: set[str] = set()
    for index, verdict in segment.tools.items():
        call_id = messages[index]["tool_call_id"]
        if index >= segment.run_end:
            after_run.append(NO_CALL)
        elif verdict is ToolVerdict.ANSWER:
            answered_in_run.add(call_id)
        elif verdict is ToolVerdict.DUPLICATE:
            lines.append(DUPLICATE_RESPONSE.format(index=index, id=call_id))
        else:
            lines.append(NO_CALL)
    open_ids = [call_id for call_id in segment.calls if call_id not in answered_in_run]
    if open_ids:
        lines.append(MISSING_RESPONSES.format(ids=", ".join(open_ids)))
    return lines + after_run


def check_chat_pairing(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every way `messages` breaks the pairing rules, one line each, worded as the API; an empty
    list if they pass. Raises `TranscriptShapeError` if they are not a list of messages."""
    lines: list[str] = []
    for segment in classify_chat(messages):
        if segment.broken:
            lines += segment_wording(segment, messages)
    return lines
