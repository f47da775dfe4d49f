"""The input tokens of a request, estimated as characters of its content / 4: close enough for
usage, and cheap.

The characters counted are those of the strings (and object keys) in the system prompt, the tool
definitions and each message's content; a number, boolean or null counts as a few characters.

An agent's requests repeat themselves: every request of a session carries the same tool list and
every earlier message again, so walking the whole body each time made the estimate the model's
largest cost, growing with the square of a session's length. `InputTokenCounter` remembers, per
session (the caller names it):

- each tool list it counted, by value (a copy, compared in C: the same catalogue sent by a new
  session is not walked again), and the session's list object with the tools it held: a list
  given again with the same tools, none added, removed or replaced, is not compared again;
- the session's message contents and their lengths: a request whose messages begin with the same
  contents, of the same lengths, has only its new messages walked. A content replaced by another
  object, or a list appended to, is counted again; editing a block of a message already sent, in
  place, is not noticed. The runtime never does it (it replaces the message instead, as earlier
  request bodies share it), and a body decoded from JSON is always new.

A session's memory holds its whole transcript: `forget` it when the session ends, or memory grows
with every session run (up to `CACHE_LIMIT` of them, then it is dropped and refilled).
"""

from __future__ import annotations

import copy
import operator
from collections.abc import Hashable, Mapping
from typing import Any

CHARS_PER_INPUT_TOKEN = 4
# A number, boolean or null, counted as a few characters.
SCALAR_CHARS = 4
# Sessions remembered before the memory is dropped and refilled, for callers that do not forget
# them: more than run at once. Only the speed depends on it, never a count.
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
        # The keys' lengths summed in C; string values (most of them) without a call.
        size: int = sum(map(len, value))
        for item in value.values():
            size += len(item) if type(item) is str else value_chars(item)
        return size
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


class _Seen:
    """What the counter remembers of one session's last request."""

    __slots__ = ("contents", "lengths", "size", "tools", "tools_chars", "tools_held")

    def __init__(self) -> None:
        # The tool list object, the tools it held, and their characters.
        self.tools: Any = None
        self.tools_held: list[Any] = []
        self.tools_chars = 0
        # The message contents, their lengths, and their characters.
        self.contents: list[Any] = []
        self.lengths: list[int] = []
        self.size = 0


class InputTokenCounter:
    """`counter(body, session)`: the estimated input tokens of request `body` (at least 1),
    sent by `session` (any hashable name; only the speed depends on it)."""

    __slots__ = ("_sessions", "_tool_lists")

    def __init__(self) -> None:
        # (a copy of a tool list, its characters)
        self._tool_lists: list[tuple[Any, int]] = []
        self._sessions: dict[Hashable, _Seen] = {}

    def __call__(self, body: Mapping[str, Any], session: Hashable) -> int:
        seen = self._sessions.get(session)
        if seen is None:
            if len(self._sessions) >= CACHE_LIMIT:
                self._sessions.clear()
            seen = self._sessions[session] = _Seen()
        size = value_chars(body.get("system", ""))
        size += self._tools_chars(body.get("tools", []), seen)
        size += self._messages_chars(body["messages"], seen)
        return max(1, size // CHARS_PER_INPUT_TOKEN)

    def forget(self, session: Hashable) -> None:
        """`session` sends no more requests: drop what is remembered of it."""
        self._sessions.pop(session, None)

    def __len__(self) -> int:
        """The sessions remembered."""
        return len(self._sessions)

    def _tools_chars(self, tools: Any, seen: _Seen) -> int:
        if type(tools) is not list:
            return value_chars(tools)
        # List equality compares items by identity first: C speed for the same tool objects.
        if seen.tools is tools and tools == seen.tools_held:
            return seen.tools_chars
        counted = next((chars for known, chars in self._tool_lists if tools == known), None)
        if counted is not None:
            chars = counted
        else:
            chars = value_chars(tools)
            if len(self._tool_lists) >= TOOL_LISTS_KEPT:
                self._tool_lists.clear()
            self._tool_lists.append((copy.deepcopy(tools), chars))
        seen.tools, seen.tools_held, seen.tools_chars = tools, list(tools), chars
        return chars

    def _messages_chars(self, messages: Any, seen: _Seen) -> int:
        try:
            contents = list(map(_CONTENT, messages))
        except KeyError:  # A message with no content (the API would refuse it): walk them all.
            return sum(content_chars(message.get("content", "")) for message in messages)
        lengths = list(map(len, contents))
        start = size = 0
        count = len(seen.contents)
        # List equality compares items by identity first: C speed for the shared contents.
        if count and lengths[:count] == seen.lengths and contents[:count] == seen.contents:
            start, size = count, seen.size
        for content in contents[start:]:
            size += len(content) if type(content) is str else content_chars(content)
        seen.contents, seen.lengths, seen.size = contents, lengths, size
        return size
