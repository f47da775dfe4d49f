"""A persisted transcript as a coding agent keeps one: lines appended as the session grows, and the
transcript read back from them when the session resumes (`--continue`).

Rules of the lines (what an agent writes, in the order it writes them):

1. One `assistant` line per block of an assistant message, written when the message enters the
   transcript; the blocks of one message share its `key`.
2. One `result` line per tool_result, written when the call's result is handed over, never before
   the line of its call (a result that comes first waits for it).
3. One `user` line per other block of user content (a prompt, an attachment, an interrupt marker).
4. One `replace` line holding a whole transcript: a rewind (the branch the user went back to) or a
   compaction (the summary and what it kept). What came before it is another branch: reading
   keeps the last branch only.

`read_transcript(lines)` folds them back: assistant lines of one key make one message, user and
result lines merge into the user message they follow (roles alternate, as the loop keeps them:
loop rule 11), a `replace` line starts over from its transcript. Nothing is repaired here: a log
cut short by a crash reads back as the broken transcript it is, and the boundary layer (the
loop's next request) repairs it or, in strict mode, refuses it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any


class LineKind(str, Enum):
    """What one persisted line holds (rules 1-4 above): an assistant block, a tool result, other
    user content, or a whole transcript replacing the branch before it."""

    ASSISTANT = "assistant"
    RESULT = "result"
    USER = "user"
    REPLACE = "replace"


@dataclass(frozen=True, slots=True)
class Line:
    """One persisted line: a block (with its assistant message's `key`), or a transcript."""

    kind: LineKind
    block: Mapping[str, Any] | None = None
    key: int = 0
    messages: tuple[Mapping[str, Any], ...] = ()


def read_transcript(lines: Iterable[Line]) -> list[dict[str, Any]]:
    """The transcript the lines hold, as an agent resuming from them reads it (rules 1-4)."""
    messages: list[dict[str, Any]] = []
    last_key: int | None = None
    for line in lines:
        if line.kind is LineKind.REPLACE:
            messages = [_copy(message) for message in line.messages]
            last_key = None
            continue
        assert line.block is not None, "a block line holds a block"
        block = dict(line.block)
        if line.kind is LineKind.ASSISTANT:
            if messages and messages[-1]["role"] == "assistant" and last_key == line.key:
                messages[-1]["content"].append(block)
            else:
                messages.append({"role": "assistant", "content": [block]})
            last_key = line.key
        else:
            if messages and messages[-1]["role"] == "user":
                messages[-1]["content"].append(block)
            else:
                messages.append({"role": "user", "content": [block]})
            last_key = None
    return messages


def _copy(message: Mapping[str, Any]) -> dict[str, Any]:
    """A message with its own content list (so that later lines append to a copy)."""
    content = message["content"]
    if isinstance(content, str):
        content = [{"type": "text", "text": content}] if content else []
    return {**message, "content": [dict(block) for block in content]}


def content_blocks(message: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    """A message's content as blocks (string content is one text block)."""
    content = message["content"]
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content)
