"""A request's transit costs no model time when the driver says when it sent the request
(`x-sim-sent-at`, `toolturn.wire.sent_at`): the embedded server of `toolturn fidelity` times the
response from the driver's `SendRequest`, as the simulator does, however slow the way there.

The transport here holds every request 80 ms of wall time before it goes out (400 ms of scenario
time at speed 5): without the header the first event comes that much later; with it, the first
event comes when it comes over a transport with no delay. (A transit longer than the time to the
model's first event cannot be hidden: no answer goes out before its request arrives. The model
here takes 150 ms of wall time to its first event.)"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import anthropic
import httpx2
import pytest

from tests.helpers.server import mock_model
from toolturn.live import run_session
from toolturn.model.config import EndpointConfig
from toolturn.model.endpoint import Endpoint
from toolturn.runtime.loop import ToolTurnLoop
from toolturn.wire.admission import AsyncEndpoint
from toolturn.wire.identity import SESSION_HEADER
from toolturn.wire.sent_at import MAX_TRANSIT_NS, SENT_AT_HEADER, sent_at
from toolturn.wire.server import MockServer

SPEED = 5.0
DELAY_S = 0.08
DELAY_NS = round(DELAY_S * SPEED * 1e9)  # the transit on the loop's clock
REPEATS = 3
ONE_ANSWER = {"kind": "explicit", "responses": [{"blocks": [{"type": "text", "text": "Done."}]}]}


class SlowTransport(httpx2.AsyncBaseTransport):
    """Loopback HTTP, every request held `delay_s` before it is sent."""

    def __init__(self, delay_s: float) -> None:
        self._delay_s = delay_s
        self._inner = httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        await asyncio.sleep(self._delay_s)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


async def first_event_after(delay_s: float, sent_at_header: bool) -> int:
    """The one request's first event, from its sending, on the loop's clock (ns)."""
    server = MockServer(mock_model(script=ONE_ANSWER), speed=SPEED, log=lambda line: None)
    await server.start("127.0.0.1", 0)
    async with httpx2.AsyncClient(transport=SlowTransport(delay_s), timeout=20) as http:
        client = anthropic.AsyncAnthropic(base_url=server.base_url, api_key="x", max_retries=0,
                                          http_client=http)
        try:
            loop = ToolTurnLoop([], model="claude-haiku-4-5", max_turns=2)
            result = await run_session(client, loop, "Say done.", {}, speed=SPEED,
                                       headers={SESSION_HEADER: "1"},
                                       sent_at_header=sent_at_header)
        finally:
            await server.close()
    assert result.reason == "end_turn"
    (log,) = result.request_logs
    assert log.first_event_ns is not None
    return log.first_event_ns - log.sent_ns


def run(work: Any) -> Any:
    return asyncio.run(asyncio.wait_for(work, timeout=30))


def least(make: Callable[[], Any]) -> int:
    """The least of a few runs: a loaded host only ever adds delay, so the least is the figure
    with the least noise in it."""
    return min(run(make()) for _ in range(REPEATS))


def test_a_slow_transport_costs_no_model_time_with_the_sent_at_header() -> None:
    reference = least(lambda: first_event_after(0.0, sent_at_header=True))
    slow_counted = least(lambda: first_event_after(DELAY_S, sent_at_header=False))
    slow_absorbed = least(lambda: first_event_after(DELAY_S, sent_at_header=True))
    # Without the header the transit is late by itself (the test's transport bites) ...
    assert slow_counted - reference > 0.8 * DELAY_NS
    # ... with it, the transit disappears: what is left is the loaded host's noise, far under
    # the 400 ms the transport held each request.
    assert abs(slow_absorbed - reference) < 0.25 * DELAY_NS


@pytest.mark.parametrize("value", ["", "abc", "-5", "+5", " 5", "5_0", "١٢", "1e9"])
def test_a_header_that_is_not_plain_digits_is_ignored(value: str) -> None:
    assert sent_at({SENT_AT_HEADER: value}, 10**12) is None


def test_a_time_in_the_future_or_too_far_back_is_ignored() -> None:
    arrived = 10**12
    assert sent_at({}, arrived) is None
    assert sent_at({SENT_AT_HEADER: str(arrived + 1)}, arrived) is None
    assert sent_at({SENT_AT_HEADER: str(arrived - MAX_TRANSIT_NS - 1)}, arrived) is None
    assert sent_at({SENT_AT_HEADER: str(arrived - MAX_TRANSIT_NS)}, arrived) == (
        arrived - MAX_TRANSIT_NS)
    assert sent_at({SENT_AT_HEADER: str(arrived)}, arrived) == arrived


def test_a_bogus_header_from_another_client_times_the_response_from_admission() -> None:
    """A client on another host (another clock) or a stale copy: the header does nothing."""

    honest = least(lambda: raw_stream_end(dict))
    bogus = least(lambda: raw_stream_end(lambda: {SENT_AT_HEADER: "1"}))
    # The control: a header believed (60 ms back) ends the stream 60 ms sooner.
    believed = least(lambda: raw_stream_end(
        lambda: {SENT_AT_HEADER: str(time.monotonic_ns() - EARLY_NS)}))
    assert abs(bogus - honest) < EARLY_NS / 3
    assert abs(honest - believed - EARLY_NS) < EARLY_NS / 3


EARLY_NS = 60_000_000


async def raw_stream_end(headers: Callable[[], dict[str, str]]) -> int:
    """Wall ns from sending one streamed request (with the `headers` made just before) to the
    end of its stream."""
    server = MockServer(mock_model(script=ONE_ANSWER), speed=SPEED, log=lambda line: None)
    await server.start("127.0.0.1", 0)
    body = {"model": "claude-haiku-4-5", "max_tokens": 100, "stream": True,
            "messages": [{"role": "user", "content": "Say done."}]}
    try:
        async with httpx2.AsyncClient(timeout=20) as http:
            started = time.monotonic_ns()
            async with http.stream("POST", f"{server.base_url}/v1/messages", json=body,
                                   headers={SESSION_HEADER: "1", **headers()}) as response:
                assert response.status_code == 200
                data = b"".join([chunk async for chunk in response.aiter_bytes()])
            assert b"message_stop" in data
            return time.monotonic_ns() - started
    finally:
        await server.close()


def test_a_request_that_waits_in_line_is_timed_from_its_slot() -> None:
    """The header only removes the transit of a request admitted at once: a request in line
    starts when a slot frees, whenever it was sent (as the simulator's queue)."""
    shared = AsyncEndpoint(Endpoint(EndpointConfig.model_validate(
        {"capacity": 1, "overflow": "queue"})))

    async def scenario() -> list[bool]:
        before = shared.would_wait()
        assert await shared.acquire()
        during = shared.would_wait()
        shared.release()
        return [before, during, shared.would_wait()]

    assert run(scenario()) == [False, True, False]
