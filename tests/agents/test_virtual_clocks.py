"""Which clocks an agent reads in virtual time (toolturn/agents/virtual_loop.py rule 6), and the
mock's retry headers (toolturn/agents/mock_transport.py: they agree, as the server's do)."""

from __future__ import annotations

import asyncio
import time

import httpx2

from tests.helpers.engine_runs import scenario_of
from tests.helpers.scenarios import MINIMAL
from toolturn.agents.mock_transport import MockTransport
from toolturn.agents.virtual_loop import run_virtual
from toolturn.model.model import MockModel
from toolturn.model.response import HttpError
from toolturn.model.tool_inputs import tool_inputs
from toolturn.wire.codecs import MESSAGES


def test_monotonic_and_perf_counter_are_virtual_time_is_the_wall() -> None:
    async def main() -> tuple[float, ...]:
        loop = asyncio.get_running_loop()
        before = (time.monotonic(), time.perf_counter(), time.perf_counter_ns(), time.time())
        await asyncio.sleep(3600)
        after = (time.monotonic(), time.perf_counter(), time.perf_counter_ns(), time.time())
        return (*[b - a for a, b in zip(before, after, strict=True)], loop.time())

    (monotonic, perf, perf_ns, wall, loop_time), _ = run_virtual(main())
    assert monotonic == perf == 3600.0 == loop_time and perf_ns == 3600 * 10**9
    assert wall < 60  # an hour of virtual time is not an hour on the wall clock
    start = time.perf_counter()
    time.sleep(0.01)
    assert time.perf_counter() - start >= 0.005  # the real clocks are back


def _headers(retry_after_ns: int) -> dict[str, str]:
    scenario = scenario_of(MINIMAL)
    model = MockModel(scenario.model, scenario.seed, tool_inputs(scenario.tool_specs))
    transport = MockTransport(model, {})
    error = HttpError(529, {"type": "error", "request_id": "req_1", "error": {
        "type": "overloaded_error", "message": "Overloaded"}}, 0, retry_after_ns)

    async def main() -> httpx2.Response:
        return await transport._http_error(error, 0, None, MESSAGES)

    response, _ = run_virtual(main())
    return {name: value for name, value in response.headers.items() if name.startswith("retry")}


def test_retry_headers_agree() -> None:
    # 100 ms cannot be said in whole seconds: only the milliseconds go.
    assert _headers(100_000_000) == {"retry-after-ms": "100"}
    assert _headers(2_000_000_000) == {"retry-after-ms": "2000", "retry-after": "2"}
