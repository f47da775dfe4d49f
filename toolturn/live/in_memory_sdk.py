"""The official SDK answered from memory: every request gets one encoded stream back through an
`httpx2.MockTransport` (no server, no network).

Two users: `toolturn.live.warm_up` pays the SDK's first-use cost before a live run's clock starts,
and `toolturn.fidelity.overhead` times the SDK's parsing alone. Both read a stream as the live
driver does (each event as a dict), so what they pay or time is the driver's own path through the
SDK.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anthropic
import httpx2


@asynccontextmanager
async def in_memory_client(payload: bytes) -> AsyncIterator[anthropic.AsyncAnthropic]:
    """An SDK client whose every request is answered 200 with `payload` as its event stream."""

    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, content=payload, headers={"content-type": "text/event-stream"})

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(answer)) as http:
        yield anthropic.AsyncAnthropic(base_url="http://in-memory.invalid", api_key="in-memory",
                                       max_retries=0, http_client=http)


async def read_events(stream: Any) -> int:
    """Read an SDK event stream to its end as the live driver reads it (each event's `to_dict`);
    the number of events read."""
    read = 0
    async with stream:
        async for event in stream:
            event.to_dict()
            read += 1
    return read
