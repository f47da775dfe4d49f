"""One server-side HTTP/1.1 connection over asyncio streams, spoken through h11.

h11 does the protocol (parsing, framing, keep-alive rules); this class does the I/O: it reads
whole requests (body included), writes responses, and can cut a response off mid-body the way a
dropped connection does (the client sees an incomplete chunked body). Bodies of unknown length
are sent chunked, which is how a streaming response goes out.

Nothing waits forever on a client (`Timeouts`), as a real server does not:

1. Idle: between requests (and before the first), a connection that sends nothing for `idle_s`
   is closed without a word, as a keep-alive timeout closes it.
2. Header: once a request's first byte has come, the whole head must come within `header_s`;
   then its body within `body_s`. A late request is answered 408 and the connection closed
   (one byte a second, or a body shorter than its Content-Length, no longer holds it).
3. Write: a client that stops reading for `write_s` (the socket's buffer full) is cut off.
4. After an error answer to a request not read to its end (400, 408, 413), the connection is
   closed as Apache and nginx close it, lingering: our side is shut, what the client still
   sends is read and dropped for at most `LINGER_S`, then the socket closes. Closed at once,
   the client's unread bytes make the kernel reset the connection, and a reset can destroy the
   answer before the client reads it.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from http import HTTPStatus

import h11

# Large enough for any transcript a test or load run sends; beyond it the request is refused.
MAX_BODY_BYTES = 32 * 1024 * 1024
_READ_BYTES = 64 * 1024
LINGER_S = 2.0
SERVER_NAME = "sim-serve"
# Reason phrases HTTPStatus does not know (Anthropic's own status).
_EXTRA_REASONS = {529: "Overloaded"}


@dataclass(frozen=True, slots=True)
class HttpRequest:
    method: str
    # The path with its query string, as sent.
    target: str
    # Header names in lower case; a repeated header keeps its last value.
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True, slots=True)
class Timeouts:
    """Seconds a connection may keep the server waiting (rules 1-3)."""

    idle_s: float = 60.0
    header_s: float = 30.0
    body_s: float = 60.0
    write_s: float = 60.0

    def __post_init__(self) -> None:
        for name in ("idle_s", "header_s", "body_s", "write_s"):
            value = getattr(self, name)
            if not value > 0 or value == float("inf"):
                raise ValueError(f"{name} must be a positive number of seconds, got {value}")


class BadRequest(Exception):
    """The client broke HTTP/1.1 or sent too large a body; `status` is the answer to give."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class HttpConnection:
    """Requests in, responses out, one at a time, on one client connection."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        timeouts: Timeouts | None = None,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._h11 = h11.Connection(h11.SERVER)
        self._timeouts = timeouts or Timeouts()
        # When the request being read must be in (monotonic seconds), and what is late then;
        # None: waiting for a request's first byte (rule 1).
        self._deadline: float | None = None
        self._late = ""
        # The request being answered is a HEAD: its answer has headers only.
        self._head = False

    async def next_request(self) -> HttpRequest | None:
        """The next whole request, or None when the client has closed the connection (or a
        previous response left it unusable). Raises BadRequest."""
        if self._h11.our_state is h11.DONE and self._h11.their_state is h11.DONE:
            self._h11.start_next_cycle()
        elif self._h11.our_state is not h11.IDLE:
            return None
        self._deadline = None
        head = await self._next_event()
        if not isinstance(head, h11.Request):
            return None
        self._head = head.method == b"HEAD"
        self._deadline = time.monotonic() + self._timeouts.body_s
        self._late = f"request body not received within {self._timeouts.body_s:g} s"
        if self._h11.they_are_waiting_for_100_continue:  # curl asks before sending a large body
            await self._write(h11.InformationalResponse(status_code=100, headers=[]))
        body = bytearray()
        while True:
            event = await self._next_event()
            if isinstance(event, h11.Data):
                body += event.data
                if len(body) > MAX_BODY_BYTES:
                    raise BadRequest(413, f"request body larger than {MAX_BODY_BYTES} bytes")
            elif isinstance(event, h11.EndOfMessage):
                break
            else:
                return None
        headers = {name.decode("latin-1").lower(): value.decode("latin-1")
                   for name, value in head.headers}
        return HttpRequest(head.method.decode("ascii"), head.target.decode("latin-1"), headers,
                           bytes(body))

    @property
    def can_respond(self) -> bool:
        """Whether a response may still be started: none has been, and the connection is up.
        (h11 lets a server answer before a request was read, for a request it cannot parse.)"""
        return self._h11.our_state in (h11.IDLE, h11.SEND_RESPONSE)

    async def send(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        """A whole response with a Content-Length (without its body, to a HEAD)."""
        await self.start(status, [*headers, ("content-length", str(len(body)))])
        if not self._head:
            await self.send_data(body)
        await self.end()

    async def start(self, status: int, headers: list[tuple[str, str]]) -> None:
        """The status line and headers; without a Content-Length the body goes chunked."""
        all_headers: list[tuple[str, str]] = [("server", SERVER_NAME), *headers]
        await self._write(h11.Response(status_code=status, reason=reason_phrase(status),
                                       headers=all_headers))

    async def send_data(self, data: bytes) -> None:
        if data:
            await self._write(h11.Data(data=data))

    async def end(self) -> None:
        """The end of the response body."""
        await self._write(h11.EndOfMessage())

    def cut(self) -> None:
        """Drop the connection at once, mid-response: no final chunk, no orderly close. What
        is still in asyncio's write buffer is discarded (`cut_after_flush` keeps it)."""
        self._writer.transport.abort()

    async def cut_after_flush(self) -> int:
        """Cut the response off mid-body once every byte written has left asyncio's buffer
        (for `write_s` at most); the bytes discarded then (0 unless the client stopped
        reading). `cut()` alone drops the buffer: a client would miss the last events the
        recording counts as written."""
        transport = self._writer.transport
        try:
            transport.set_write_buffer_limits(high=0)  # drain() now waits for an empty buffer
            async with asyncio.timeout(self._timeouts.write_s):
                await self._writer.drain()
        except (TimeoutError, ConnectionError):
            pass  # the client stopped reading, or left: the rest is not going out
        unsent = transport.get_write_buffer_size()
        transport.abort()
        return unsent

    def close(self) -> None:
        """Close the connection (after a complete response, or to refuse to go on). Not
        waited for: the transport flushes and closes on its own, even while the server is
        being cancelled."""
        self._writer.close()

    async def linger_and_close(self) -> None:
        """Rule 4: shut our side, drain what the client still sends (bounded), close."""
        try:
            if self._writer.can_write_eof():
                self._writer.write_eof()
            async with asyncio.timeout_at(asyncio.get_running_loop().time() + LINGER_S):
                while await self._reader.read(_READ_BYTES):
                    pass
        except (ConnectionError, TimeoutError, OSError):
            pass  # gone or still talking: closed either way
        self.close()

    async def _next_event(self) -> h11.Event | type[h11.NEED_DATA] | type[h11.PAUSED]:
        while True:
            try:
                event = self._h11.next_event()
            except h11.RemoteProtocolError as error:
                raise BadRequest(error.error_status_hint, str(error)) from None
            if event is not h11.NEED_DATA:
                return event
            data = await self._read()
            if data and self._deadline is None:  # a request has begun: its head is due
                self._deadline = time.monotonic() + self._timeouts.header_s
                self._late = f"request headers not received within {self._timeouts.header_s:g} s"
            self._h11.receive_data(data)

    async def _read(self) -> bytes:
        """The next bytes from the client; b"" once it has closed, or stayed idle too long."""
        if self._deadline is None:
            wait = self._timeouts.idle_s
        else:
            wait = self._deadline - time.monotonic()
        try:
            # asyncio.timeout, not wait_for: 3.11's wait_for can swallow a cancellation that
            # comes as the read completes, and the server's close() then waited a whole idle
            # timeout for the connection.
            async with asyncio.timeout(max(wait, 0.0)):
                return await self._reader.read(_READ_BYTES)
        except ConnectionError:
            return b""
        except TimeoutError:
            if self._deadline is None:
                return b""  # idle: closed as if the client had closed (rule 1)
            raise BadRequest(408, self._late) from None

    async def _write(self, event: h11.Event) -> None:
        data = self._h11.send(event)
        if data:
            self._writer.write(data)
            try:
                async with asyncio.timeout(self._timeouts.write_s):
                    await self._writer.drain()
            except TimeoutError:
                self.cut()
                raise ConnectionResetError(
                    f"client read nothing for {self._timeouts.write_s:g} s"
                ) from None


def reason_phrase(status: int) -> str:
    """The reason phrase of a status line ("OK", "Overloaded"); empty for an unknown status."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return _EXTRA_REASONS.get(status, "")
