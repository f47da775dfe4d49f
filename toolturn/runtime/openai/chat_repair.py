"""The API-boundary repair for Chat Completions `messages`: make them pass `check_chat_pairing`,
and say what changed, in the vocabulary of the Messages API's repair (`toolturn.runtime.repair`:
the same `Repair` and `RepairKind`, so that one report counts repairs of every protocol).

Every change is the repair of a verdict of `classify_chat`, segment by segment (an assistant
message and the messages up to the next one):

- a tool call whose id an earlier call already used is removed from `tool_calls`
  (`DUPLICATE_TOOL_USE_REMOVED`: the first call keeps the id); an assistant message left with no
  call loses its `tool_calls` key, and, if it has no content either, gets `PLACEHOLDER_TEXT` as
  its content (`PLACEHOLDER_INSERTED`), since the API wants content or calls;
- a tool message that answers no call of its segment is removed (`ORPHAN_RESULT_REMOVED`), so is
  a second answer to a call (`DUPLICATE_RESULT_REMOVED`: the first stays);
- a tool message that answers a call of its segment after another message (a user or system
  message slipped in between) moves up into the run right after the assistant message, after the
  run's own answers, in its order (`RESULT_MOVED_TO_FRONT`);
- each call still unanswered gets a tool message with `MISSING_RESULT_TEXT` after those, in call
  order (`MISSING_RESULT_INSERTED`).

Every other message keeps its order. `Repair.message_index` is the index in the OUTPUT list of
the message where the change shows: the assistant message a call was removed from, the moved or
inserted tool message, or, for a removed message, the message that took its place. Linear in the
messages; messages that pass come back equal, the objects shared, with no repairs; the input is
never mutated; repairing the output again changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolturn.runtime.openai.chat_pairing import (
    Segment,
    ToolVerdict,
    check_chat_pairing,
    classify_chat,
)
from toolturn.runtime.pairing import RepairKind
from toolturn.runtime.repair import MISSING_RESULT_TEXT, PLACEHOLDER_TEXT, PairingError, Repair

__all__ = ["ensure_chat_pairing", "missing_tool_message"]

_REMOVAL = {
    ToolVerdict.DUPLICATE: RepairKind.DUPLICATE_RESULT_REMOVED,
    ToolVerdict.ORPHAN: RepairKind.ORPHAN_RESULT_REMOVED,
}


def missing_tool_message(call_id: str) -> dict[str, Any]:
    """The error tool message inserted for a call that has none."""
    return {"role": "tool", "tool_call_id": call_id, "content": MISSING_RESULT_TEXT}


def ensure_chat_pairing(
    messages: Sequence[Mapping[str, Any]], *, strict: bool = False
) -> tuple[list[Mapping[str, Any]], list[Repair]]:
    """Return `(repaired messages, repairs)`; the messages always pass `check_chat_pairing`.

    With `strict=True` nothing is repaired: messages that pass come back as a new list of the
    same objects, any others raise `PairingError` listing every violation. Raises
    `toolturn.runtime.pairing.TranscriptShapeError` for input that is not a list of messages.
    """
    segments = classify_chat(messages)
    broken = any(segment.broken for segment in segments)
    if strict and broken:
        raise PairingError(check_chat_pairing(messages))
    out: list[Mapping[str, Any]] = []
    repairs: list[Repair] = []
    if not broken:
        return list(messages), repairs
    ends = [segment.start for segment in segments[1:]] + [len(messages)]
    for segment, end in zip(segments, ends, strict=True):
        first = max(segment.start, 0)
        if not segment.broken:
            out.extend(messages[first:end])
            continue
        if segment.start >= 0:
            out.append(_assistant(messages[segment.start], segment, len(out), repairs))
        _answers(messages, segment, out, repairs)
        for index in range(max(segment.run_end, first), end):
            verdict = segment.tools.get(index)
            if verdict is None:
                out.append(messages[index])
            elif verdict in _REMOVAL:
                _removed(messages[index], verdict, out, repairs)
    return out, repairs


def _removed(
    message: Mapping[str, Any],
    verdict: ToolVerdict,
    out: list[Mapping[str, Any]],
    repairs: list[Repair],
) -> None:
    repairs.append(Repair(_REMOVAL[verdict], len(out), message["tool_call_id"]))


def _assistant(
    message: Mapping[str, Any], segment: Segment, index: int, repairs: list[Repair]
) -> Mapping[str, Any]:
    """The segment's assistant message without its calls that reuse an id."""
    if not segment.duplicate_calls:
        return message
    for _, call_id in segment.duplicate_calls:
        repairs.append(Repair(RepairKind.DUPLICATE_TOOL_USE_REMOVED, index, call_id))
    dropped = {position for position, _ in segment.duplicate_calls}
    calls = [call for position, call in enumerate(message["tool_calls"]) if position not in dropped]
    repaired = {key: value for key, value in message.items() if key != "tool_calls"}
    if calls:
        repaired["tool_calls"] = calls
    elif not repaired.get("content"):
        repairs.append(Repair(RepairKind.PLACEHOLDER_INSERTED, index))
        repaired["content"] = PLACEHOLDER_TEXT
    return repaired


def _answers(
    messages: Sequence[Mapping[str, Any]],
    segment: Segment,
    out: list[Mapping[str, Any]],
    repairs: list[Repair],
) -> None:
    """The run after the segment's assistant message: its answers in place (its orphans and
    duplicates removed), then the late ones moved up, then one error tool message per call
    nothing answers."""
    late: list[Mapping[str, Any]] = []
    for index, verdict in segment.tools.items():
        if verdict is ToolVerdict.ANSWER:
            out.append(messages[index])
        elif verdict is ToolVerdict.LATE:
            late.append(messages[index])
        elif index < segment.run_end:
            _removed(messages[index], verdict, out, repairs)
    for message in late:
        repairs.append(Repair(RepairKind.RESULT_MOVED_TO_FRONT, len(out), message["tool_call_id"]))
        out.append(message)
    for call_id in segment.unanswered:
        repairs.append(Repair(RepairKind.MISSING_RESULT_INSERTED, len(out), call_id))
        out.append(missing_tool_message(call_id))
