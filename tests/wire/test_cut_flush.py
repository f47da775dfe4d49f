"""A cut response drops the connection only once what was written left the server
(`HttpConnection.cut_after_flush`): the recording counts those bytes as sent, so the client
must be able to read them; a client that stops reading gets the rest discarded, and told."""

from __future__ import annotations

import asyncio

from toolturn.wire.connection import HttpConnection, Timeouts

SIZE = 8 * 1024 * 1024  # far beyond a socket's buffers: most of it waits in asyncio's buffer


async def _serve_then_cut(read_delay_s: float, write_s: float) -> tuple[int, int]:
    """Bytes the client received and the bytes `cut_after_flush` says it discarded."""
    discarded: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        http = HttpConnection(reader, writer, Timeouts(write_s=write_s))
        writer.write(b"x" * SIZE)  # as a burst of events would be, before the cut
        discarded.set_result(await http.cut_after_flush())

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    await asyncio.sleep(read_delay_s)
    received = 0
    try:
        while chunk := await reader.read(1 << 16):
            received += len(chunk)
    except ConnectionError:
        pass
    writer.close()
    server.close()
    await server.wait_closed()
    return received, await discarded


def test_every_byte_written_before_a_cut_reaches_a_reading_client() -> None:
    received, discarded = asyncio.run(_serve_then_cut(read_delay_s=0.2, write_s=10.0))
    assert (received, discarded) == (SIZE, 0)


def test_a_client_that_stops_reading_has_the_rest_discarded_and_counted() -> None:
    received, discarded = asyncio.run(_serve_then_cut(read_delay_s=0.6, write_s=0.1))
    assert discarded > 0 and received + discarded <= SIZE
