"""Server-sent events, the wire format of a streaming Messages API response.

Encoding writes each event as the API does: ``event: <type>\\ndata: <compact JSON>\\n\\n``, UTF-8,
non-ASCII text unescaped, except lone surrogates, which UTF-8 cannot carry: they stay ``\\ud800``
escapes, the same string to any JSON reader.

Decoding follows the WHATWG event-stream rules the SDK's decoder follows (lines end in CRLF, LF
or CR; ``:`` starts a comment; several ``data:`` lines join with ``\\n``; a blank line dispatches;
unknown fields are ignored), incrementally: a chunk may end anywhere, even inside a line, a CRLF
pair or a multi-byte UTF-8 character. Each ``data`` payload is JSON as RFC 8259 has it
(`toolturn.runtime.strict_json`), stricter than the SDK's reader.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from toolturn.runtime.strict_json import NotAnObject, parse_json_object

__all__ = [
    "PartialEvent",
    "SSEDecodeError",
    "SSEDecoder",
    "decode_stream",
    "encode_event",
    "encode_stream",
]

_UTF8_BOM = b"\xef\xbb\xbf"
# `json.dumps` with these settings builds this encoder anew for each call: once per stream event.
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def encode_event(event: dict[str, Any]) -> bytes:
    """One event as SSE bytes; the event name is the event's ``type``."""
    data = _ENCODE(event)
    # backslashreplace acts on lone surrogates only (UTF-8 encodes everything else), which json
    # leaves only inside strings: `\ud800` there is the JSON escape of the same character.
    return f"event: {event['type']}\ndata: {data}\n\n".encode("utf-8", "backslashreplace")


def encode_stream(events: Iterable[dict[str, Any]]) -> bytes:
    """A whole stream of events as one ``text/event-stream`` body."""
    return b"".join(encode_event(event) for event in events)


class SSEDecodeError(ValueError):
    """The bytes are not a stream of JSON events; the message names the line (1-based)."""


@dataclass(frozen=True, slots=True)
class PartialEvent:
    """What was left when the stream closed in the middle of an event (a cut stream).

    ``event`` and ``data_lines`` are the fields read so far; ``unterminated_line`` is the text
    of a last line that never got its line ending (empty if the cut fell between lines).
    """

    event: str | None
    data_lines: tuple[str, ...]
    unterminated_line: str


class SSEDecoder:
    """Incremental decoder: bytes in, event dicts (each ``data`` payload parsed as JSON) out.

    Feed chunks with :meth:`feed`, then call :meth:`close` once, which says whether the stream
    ended inside an event. Events without data (a bare ``event:`` line) are not dispatched, as in
    the SSE spec and the SDK.
    """

    def __init__(self) -> None:
        self._pending: list[bytes] = []  # the bytes of the current, unterminated line
        self._line_number = 0
        self._event: str | None = None
        self._data: list[str] = []
        self._first_data_line = 0
        self._skip_lf = False
        self._closed = False

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        """Decode a chunk; returns the events it completed, in order. Raises SSEDecodeError."""
        if self._closed:
            raise SSEDecodeError("feed() after close()")
        # The previous chunk ended in CR: an LF here completes that CRLF.
        if self._skip_lf and chunk:
            self._skip_lf = False
            chunk = chunk.removeprefix(b"\n")
        if b"\n" not in chunk and b"\r" not in chunk:
            # Mid-line: keep the piece without rescanning what came before, so a long line fed
            # in small chunks costs linear time.
            self._pending.append(chunk)
            return []
        self._pending.append(chunk)
        lines = b"".join(self._pending).splitlines(keepends=True)
        self._pending = []
        if not lines[-1].endswith((b"\n", b"\r")):
            # An unterminated line waits for the rest of its bytes.
            self._pending.append(lines.pop())
        elif lines[-1].endswith(b"\r"):
            self._skip_lf = True
        events: list[dict[str, Any]] = []
        for raw in lines:
            event = self._line(raw.rstrip(b"\r\n"))
            if event is not None:
                events.append(event)
        return events

    def close(self) -> PartialEvent | None:
        """End of input. Returns None if the stream ended between events, else the partial event
        that was cut off, which is not dispatched (as the SSE spec and the SDK do)."""
        self._closed = True
        unterminated = b"".join(self._pending)
        self._pending = []
        if not unterminated and self._event is None and not self._data:
            return None
        line_number = self._line_number + 1
        if line_number == 1:
            unterminated = unterminated.removeprefix(_UTF8_BOM)
        return PartialEvent(self._event, tuple(self._data), self._text(unterminated, line_number))

    def _text(self, raw: bytes, line_number: int) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise SSEDecodeError(
                f"line {line_number}: not UTF-8 ({error.reason}): {raw[:80]!r}"
            ) from None

    def _line(self, raw: bytes) -> dict[str, Any] | None:
        self._line_number += 1
        if self._line_number == 1:
            raw = raw.removeprefix(_UTF8_BOM)  # the spec allows one at the very start
        if not raw:
            return self._dispatch()
        line = self._text(raw, self._line_number)
        if line.startswith(":"):
            return None
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "data":
            if not self._data:
                self._first_data_line = self._line_number
            self._data.append(value)
        elif field == "event":
            self._event = value
        # id, retry and unknown fields carry nothing the Messages API uses.
        return None

    def _dispatch(self) -> dict[str, Any] | None:
        name, data = self._event, self._data
        self._event, self._data = None, []
        if not data:
            return None
        text = "\n".join(data)
        where = f"line {self._first_data_line}"
        try:
            payload = parse_json_object(text)
        except NotAnObject as error:
            raise SSEDecodeError(f"{where}: data is {error}: {text[:120]}") from None
        except ValueError as error:
            raise SSEDecodeError(f"{where}: data is not JSON ({error}): {text[:120]}") from None
        if name is not None and payload.get("type") != name:
            raise SSEDecodeError(
                f"{where}: event name {name!r} does not match the data's type "
                f"{payload.get('type')!r}"
            )
        return payload


def decode_stream(body: bytes) -> tuple[list[dict[str, Any]], PartialEvent | None]:
    """Decode a whole ``text/event-stream`` body: its events and the cut-off tail, if any."""
    decoder = SSEDecoder()
    events = decoder.feed(body)
    return events, decoder.close()
