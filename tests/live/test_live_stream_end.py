"""The live driver's record of a response whose session ends before the SDK's stream does: the
loop ends the turn at `message_stop`, the driver's session ends and cancels the stream's reading
task while the SDK still waits for the connection to close. The request's record still holds
what was read (tokens, the message_stop time), as the simulated twin's does; and a tool task
cancelled before it started leaves no never-awaited coroutine behind."""

from __future__ import annotations

import asyncio
import gc
import warnings
from collections.abc import AsyncIterator
from typing import Any

import anthropic
import httpx2

from toolturn.live import run_session
from toolturn.live.session import _Driver
from toolturn.runtime.loop import ToolTurnLoop
from toolturn.wire.sse import encode_stream

EVENTS: list[dict[str, Any]] = [
    {"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [],
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 120, "output_tokens": 1}}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Done."}},
    {"type": "content_block_stop", "index": 0},
    {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
     "usage": {"output_tokens": 7}},
    {"type": "message_stop"},
]


def lingering_client() -> anthropic.AsyncAnthropic:
    """Answers every request with EVENTS, then keeps the connection open (as a loaded server
    may, for a moment, before the end of the body reaches the SDK)."""

    async def body() -> AsyncIterator[bytes]:
        yield encode_stream(iter(EVENTS))
        await asyncio.sleep(3600)

    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, content=body(), headers={"content-type": "text/event-stream"})

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(answer))
    return anthropic.AsyncAnthropic(base_url="http://in-memory.invalid", api_key="x",
                                    max_retries=0, http_client=http)


def test_a_session_that_ends_before_its_stream_keeps_the_response_s_record() -> None:
    async def session() -> Any:
        client = lingering_client()
        try:
            return await asyncio.wait_for(
                run_session(client, ToolTurnLoop([], model="m"), "hi", {}), timeout=20)
        finally:
            await client.close()

    result = asyncio.run(session())
    assert result.reason == "end_turn"
    (log,) = result.request_logs
    assert log.status == "200" and log.n_events == len(EVENTS)
    assert (log.input_tokens, log.output_tokens) == (120, 7)
    assert log.message_stop_ns is not None and log.end_ns is not None
    assert log.first_event_ns is not None and log.message_stop_ns >= log.first_event_ns


def test_a_task_cancelled_before_it_started_leaves_no_never_awaited_coroutine() -> None:
    async def spawn_and_cancel() -> None:
        driver = _Driver.__new__(_Driver)
        driver._tasks = set()
        driver._streams = set()

        async def work() -> None:
            raise AssertionError("never started")

        task = driver._spawn(work())
        task.cancel()  # before the event loop ever ran it
        await asyncio.gather(task, return_exceptions=True)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        asyncio.run(spawn_and_cancel())
        gc.collect()
    assert not [w for w in caught if "never awaited" in str(w.message)], caught
