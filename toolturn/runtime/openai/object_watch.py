"""When streamed text first parses as a complete JSON object, found in one pass.

Chat Completions never says a call's arguments are complete; the speculative start
(``chat_start = "at_parsed_json"``) starts a call once its arguments so far parse as a JSON
object. Parsing the whole text at every piece (as the openai SDK does for strict tools) is
quadratic. `ObjectWatch` instead follows the text's nesting as it arrives, once per character
that can change it (quotes, backslashes inside strings, brackets), and parses only when the
outermost ``{`` closes: that is the one place a JSON object can end, so it parses at most once.

Why one parse is enough: a valid JSON text that starts with ``{`` ends at the bracket matching it,
followed only by whitespace. So if the text up to that bracket is not a valid object, no later
piece can make it one; and once it is, the only change still possible is text after it, which is
either whitespace (the same value: no change) or anything else (invalid from then on: `CHANGED`,
the misfire of a start made at `PARSED`).
"""

from __future__ import annotations

import re
from typing import Any, Final, Literal

from toolturn.runtime.strict_json import parse_json_object

__all__ = ["CHANGED", "PARSED", "ObjectWatch", "Signal"]

Signal = Literal["parsed", "changed"]
PARSED: Final = "parsed"
CHANGED: Final = "changed"

_WHITESPACE = " \t\n\r"  # JSON's whitespace: str.strip() would also take other characters
# The characters that can change the nesting; everything else is skipped by the regex engine.
_STRUCTURAL = re.compile(r'["\\{}\[\]]')
_OPENERS = frozenset("{[")


class ObjectWatch:
    """Follows one text, piece by piece: `feed` returns `PARSED` on the piece after which the
    whole text first parses as a JSON object, `CHANGED` on the first piece after that which is not
    whitespace, and None otherwise. `value` is the parsed object from `PARSED` until `CHANGED`
    (None before and after): while it is set, it is the value of the whole text.

    `parts` is the caller's list of the text's pieces, which the caller appends each piece to
    before feeding it: the watch reads it (to parse, once) and keeps no copy."""

    __slots__ = ("_depth", "_escaped", "_in_string", "_parts", "_state", "value")

    def __init__(self, parts: list[str]) -> None:
        self._parts = parts
        self._depth = 0
        self._in_string = False
        self._escaped = False  # the last piece ended with a backslash inside a string
        # "start": only whitespace so far; "open": inside the object; "parsed": closed and
        # valid; "dead": never an object from here on (or changed after parsing).
        self._state = "start"
        self.value: dict[str, Any] | None = None

    def feed(self, piece: str) -> Signal | None:
        """Follow `piece`, which the caller has just appended to the parts: `PARSED`, `CHANGED`
        or None (the class's docstring)."""
        state = self._state
        if state == "dead" or not piece:
            return None
        if state == "parsed":
            if piece.strip(_WHITESPACE):
                self._drop()
                return CHANGED
            return None
        start = 0
        if state == "start":
            stripped = piece.lstrip(_WHITESPACE)
            if not stripped:
                return None
            if stripped[0] != "{":
                self._drop()
                return None
            self._state = "open"
            start = len(piece) - len(stripped)
        return self._scan(piece, start)

    def _scan(self, piece: str, start: int) -> Signal | None:
        depth, in_string = self._depth, self._in_string
        skip = start
        if self._escaped:  # the escaped character opens this piece
            self._escaped = False
            skip = 1
        for match in _STRUCTURAL.finditer(piece, start):
            position = match.start()
            if position < skip:
                continue
            char = piece[position]
            if in_string:
                if char == '"':
                    in_string = False
                elif char == "\\":
                    skip = position + 2
                    if skip > len(piece):
                        self._escaped = True
                continue
            if char == '"':
                in_string = True
            elif char in _OPENERS:
                depth += 1
            elif char != "\\":  # a backslash outside a string: invalid, the parse will say so
                depth -= 1
                if depth == 0:
                    return self._closed(piece[position + 1 :])
        self._depth, self._in_string = depth, in_string
        return None

    def _closed(self, rest: str) -> Signal | None:
        """The outermost bracket closed; `rest` is what followed it in the same piece."""
        if rest.strip(_WHITESPACE):
            self._drop()
            return None
        try:
            self.value = parse_json_object("".join(self._parts))
        except ValueError:  # not JSON, or not an object: NotAnObject is one too
            self._drop()
            return None
        self._state = "parsed"
        return PARSED

    def _drop(self) -> None:
        self._state = "dead"
        self.value = None
