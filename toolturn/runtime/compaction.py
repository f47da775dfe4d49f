"""Compaction: a long transcript's prefix replaced by a summary user message, cut one of two ways.

`compact(messages, cut)` keeps the later half of the messages (by count) and puts a summary of
the rest in front, in a user message of its own or, when the kept part opens with a user message,
at the front of that one (roles alternate: that much any agent gets right).

- `naive` cuts at the half, wherever it falls: when the kept part opens with the user message
  of tool_results whose tool_use went into the summary, those results are orphans, and the API
  refuses the transcript until the boundary layer drops them (leading orphans).
- `turn_boundary` moves the cut forward past any user message holding tool_results, so that no
  tool_use is ever parted from its results: the transcript stays legal.

With too few messages to cut (or, at a turn boundary, no boundary after the half) the transcript
is left as it is (`None`). Pure: the caller decides when (a token count past its trigger).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any

from toolturn.runtime.pairing import TOOL_RESULT
from toolturn.runtime.transcript_lines import content_blocks

SUMMARY_TEXT = "[compacted] A summary of the {count} earlier messages of this conversation."
# Fewer messages than this are not worth a summary.
MIN_MESSAGES = 3


class Cut(str, Enum):
    """Where a compaction may cut: `naive` by message count (it can split a tool_use from its
    result), `turn_boundary` only where no tool_use waits for a result."""

    NAIVE = "naive"
    TURN_BOUNDARY = "turn_boundary"


def compact(
    messages: Sequence[Mapping[str, Any]], cut: Cut | str
) -> list[dict[str, Any]] | None:
    """The compacted transcript, or None when there is nothing to cut (see the module doc)."""
    cut = Cut(cut)
    if len(messages) < MIN_MESSAGES:
        return None
    index = len(messages) // 2
    if cut is Cut.TURN_BOUNDARY:
        while index < len(messages) and _holds_results(messages[index]):
            index += 1
        if index >= len(messages):
            return None
    summary = {"type": "text", "text": SUMMARY_TEXT.format(count=index)}
    first, rest = messages[index], [dict(message) for message in messages[index + 1:]]
    if first["role"] == "user":
        return [{**first, "content": [summary, *content_blocks(first)]}, *rest]
    return [{"role": "user", "content": [summary]}, dict(first), *rest]


def _holds_results(message: Mapping[str, Any]) -> bool:
    return message["role"] == "user" and any(
        block.get("type") == TOOL_RESULT for block in content_blocks(message)
    )
