"""One server-side HTTP/1.1 connection over asyncio streams, spoken through h11.

h11 does the protocol (parsing, framing, keep-alive rules); this class does the I/O: it reads
whole requests (body included), writes responses, and can cut a response off mid-body the way a
dropped connection does (the client sees an incomplete chunked body). Bodies of unknown length
are sent chunked, which is how a streaming response goes out.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from http import HTTPStatus

import h11

# Large enough for any transcript a test or load run sends; beyond it the request is refused.
MAX_BODY_BYTES = 32 * 1024 * 1024
_READ_BYTES = 64 * 1024
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


class BadRequest(Exception):
    """The client broke HTTP/1.1 or sent too large a body; `status` is the answer to give."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class HttpConnection:
    """Requests in, responses out, one at a time, on one client connection."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._h11 = h11.Connection(h11.SERVER)

    async def next_request(self) -> HttpRequest | None:
        """The next whole request, or None when the client has closed the connection (or a
        previous response left it unusable). Raises BadRequest."""
        if self._h11.our_state is h11.DONE and self._h11.their_state is h11.DONE:
            self._h11.start_next_cycle()
        elif self._h11.our_state is not h11.IDLE:
            return None
        head = await self._next_event()
        if not isinstance(head, h11.Request):
            return None
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
        """A whole response with a Content-Length."""
        await self.start(status, [*headers, ("content-length", str(len(body)))])
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
        """Drop the connection at once, mid-response: no final chunk, no orderly close."""
        self._writer.transport.abort()

    def close(self) -> None:
        """Close the connection (after a complete response, or to refuse to go on). Not
        waited for: the transport flushes and closes on its own, even while the server is
        being cancelled."""
        self._writer.close()

    async def _next_event(self) -> h11.Event | type[h11.NEED_DATA] | type[h11.PAUSED]:
        while True:
            try:
                event = self._h11.next_event()
            except h11.RemoteProtocolError as error:
                raise BadRequest(error.error_status_hint, str(error)) from None
            if event is not h11.NEED_DATA:
                return event
            try:
                data = await self._reader.read(_READ_BYTES)
            except ConnectionError:
                data = b""
            self._h11.receive_data(data)

    async def _write(self, event: h11.Event) -> None:
        data = self._h11.send(event)
        if data:
            self._writer.write(data)
            await self._writer.drain()


def reason_phrase(status: int) -> str:
    """The reason phrase of a status line ("OK", "Overloaded"); empty for an unknown status."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return _EXTRA_REASONS.get(status, "")
