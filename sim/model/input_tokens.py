"""The input tokens of a request, estimated as characters of its content / 4: close enough for
usage, and cheap.

The characters counted are those of the strings (and object keys) in the system prompt, the tool
definitions and each message's content; a number, boolean or null counts as a few characters.

An agent's requests repeat themselves: every request of a session carries the same tool list and
every earlier message again, so walking the whole body each time made the estimate the model's
largest cost, growing with the square of a session's length. `InputTokenCounter` remembers:

- each tool list it counted, by value (a copy, compared in C: the same catalogue sent by a new
  session is not walked again), and each list object it has seen with the tools it held: a
  list given again with the same tools, none added, removed or replaced, is not compared again;
- each transcript's message contents and their lengths (keyed by its first content): a request
  whose messages begin with the same contents, of the same lengths, has only its new messages
  walked. A content replaced by another object, or a list appended to, is counted again; editing a
  block of a message already sent, in place, is not noticed. The runtime never does it (it
  replaces the message instead, as earlier request bodies share it), and a body decoded from JSON
  is always new.
"""

from __future__ import annotations

import copy
import operator
from collections.abc import Mapping
from typing import Any

CHARS_PER_INPUT_TOKEN = 4
# A number, boolean or null, counted as a few characters.
SCALAR_CHARS = 4
# Transcripts kept before the memory is dropped and refilled: those of the sessions running at
# once, while what ended sessions leave is bounded. Only the speed depends on it, never a count.
CACHE_LIMIT = 1024
# Distinct tool lists kept (a simulation sends one catalogue).
TOOL_LISTS_KEPT = 8


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


_CONTENT = operator.itemgetter("content")


class InputTokenCounter:
    """`counter(body)`: the estimated input tokens of request `body` (at least 1)."""

    __slots__ = ("_tool_lists", "_tool_objects", "_transcripts")

    def __init__(self) -> None:
        # (a copy of a tool list, its characters)
        self._tool_lists: list[tuple[Any, int]] = []
        # id(tool list) -> (the list, the tools it held, characters)
        self._tool_objects: dict[int, tuple[Any, list[Any], int]] = {}
        # id(first content) -> (the contents counted, their lengths, characters)
        self._transcripts: dict[int, tuple[list[Any], list[int], int]] = {}

    def __call__(self, body: Mapping[str, Any]) -> int:
        size = value_chars(body.get("system", ""))
        size += self._tools_chars(body.get("tools", []))
        size += self._messages_chars(body["messages"])
        return max(1, size // CHARS_PER_INPUT_TOKEN)

    def _tools_chars(self, tools: Any) -> int:
        if type(tools) is not list:
            return value_chars(tools)
        seen = self._tool_objects.get(id(tools))
        # List equality compares items by identity first: C speed for the same tool objects.
        if seen is not None and seen[0] is tools and tools == seen[1]:
            return seen[2]
        counted = next((chars for known, chars in self._tool_lists if tools == known), None)
        if counted is not None:
            chars = counted
        else:
            chars = value_chars(tools)
            if len(self._tool_lists) >= TOOL_LISTS_KEPT:
                self._tool_lists.clear()
            self._tool_lists.append((copy.deepcopy(tools), chars))
        if len(self._tool_objects) >= CACHE_LIMIT:
            self._tool_objects.clear()
        self._tool_objects[id(tools)] = (tools, list(tools), chars)
        return chars

    def _messages_chars(self, messages: Any) -> int:
        try:
            contents = list(map(_CONTENT, messages))
        except KeyError:  # A message with no content (the API would refuse it): walk them all.
            return sum(content_chars(message.get("content", "")) for message in messages)
        if not contents:
            return 0
        lengths = list(map(len, contents))
        key = id(contents[0])
        known = self._transcripts.get(key)
        start = size = 0
        if known is not None:
            seen, seen_lengths, seen_size = known
            count = len(seen)
            # List equality compares items by identity first: C speed for the shared contents.
            if lengths[:count] == seen_lengths and contents[:count] == seen:
                start, size = count, seen_size
        for content in contents[start:]:
            size += len(content) if type(content) is str else content_chars(content)
        if known is None and len(self._transcripts) >= CACHE_LIMIT:
            self._transcripts.clear()
        self._transcripts[key] = (contents, lengths, size)
        return size
