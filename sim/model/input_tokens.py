"""The input tokens of a request, estimated as characters of its content / 4: close enough for
usage, and cheap.

The characters counted are those of the strings (and object keys) in the system prompt, the tool
definitions and each message's content; a number, boolean or null counts as a few characters.

An agent's requests repeat themselves: every request of a session carries the same tool list and
every earlier message again, so walking the whole body each time made the estimate the model's
largest cost, growing with the square of a session's length. `InputTokenCounter` remembers the
count of each tool list and each message by object identity, so a request costs a walk of its
new messages only. An entry holds its object (the id cannot be reused while it lives) and is
trusted only while the object still holds the same content object of the same length: a caller
that replaces a message's content, or appends to it, is counted again. Editing a block of a
message already sent, in place, is not noticed; the runtime never does it (it replaces the
message instead, as earlier request bodies share it), and a body decoded from JSON is always new.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

CHARS_PER_INPUT_TOKEN = 4
# A number, boolean or null, counted as a few characters.
SCALAR_CHARS = 4
# Entries kept before the memory is dropped and refilled: the transcripts of the sessions running
# at once (64 sessions of 30 messages fit twice), while what ended sessions leave is bounded.
# Only the speed depends on it, never a count.
CACHE_LIMIT = 4096


def value_chars(value: Any) -> int:
    """Characters of the strings (and keys) in a JSON value. Walks nodes without serialising:
    `len` of a string is free, so a 10 KB tool result costs as much as a 10-byte one."""
    kind = type(value)
    if kind is str:
        return len(value)
    if kind is dict:
        return sum(len(key) + value_chars(item) for key, item in value.items())
    if kind is list:
        return sum(map(value_chars, value))
    return SCALAR_CHARS


def content_chars(content: Any) -> int:
    """Characters of one message's content (a string or a list of blocks)."""
    # The common blocks first, without the generic walk.
    if type(content) is str:
        return len(content)
    size = 0
    for block in content:
        kind = block.get("type")
        if kind == "text":
            size += len(block["text"])
        elif kind == "tool_result" and type(block.get("content")) is str:
            size += len(block["content"])
        else:
            size += value_chars(block)
    return size


class InputTokenCounter:
    """`counter(body)`: the estimated input tokens of request `body` (at least 1)."""

    __slots__ = ("_known",)

    def __init__(self) -> None:
        # id(owner) -> (owner, the content counted, its length, characters)
        self._known: dict[int, tuple[Any, Any, int, int]] = {}

    def __call__(self, body: Mapping[str, Any]) -> int:
        size = value_chars(body.get("system", ""))
        tools = body.get("tools", [])
        if type(tools) is list:
            size += self._remembered(tools, tools, value_chars)
        else:
            size += value_chars(tools)
        known = self._known
        for message in body["messages"]:
            content = message.get("content", "")
            if type(content) is str:
                size += len(content)
                continue
            # `_remembered(message, content, content_chars)`, its hit inlined: it runs for
            # every message of every request.
            entry = known.get(id(message))
            if (
                entry is not None
                and entry[0] is message
                and entry[1] is content
                and entry[2] == len(content)
            ):
                size += entry[3]
            else:
                size += self._remembered(message, content, content_chars)
        return max(1, size // CHARS_PER_INPUT_TOKEN)

    def _remembered(self, owner: Any, content: Any, count: Callable[[Any], int]) -> int:
        known = self._known.get(id(owner))
        if (
            known is not None
            and known[0] is owner
            and known[1] is content
            and known[2] == len(content)
        ):
            return known[3]
        chars = count(content)
        if len(self._known) >= CACHE_LIMIT:
            self._known.clear()
        self._known[id(owner)] = (owner, content, len(content), chars)
        return chars
