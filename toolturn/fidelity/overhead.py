"""What the real path adds per hop, measured, in wall-clock milliseconds.

From the paired tables (live minus simulated, divided back by the speed, so the figure is the
real cost whatever the speed):

- `request, first of a session`: a session's first request, from sent to its first stream event
  (a cold client: connection set-up, the SDK's first request);
- `request, later`: the same for every later request (HTTP on a kept-alive connection, the
  server's scheduling, the SDK's response parsing). Against the embedded server the request's
  way there costs no model time (`toolturn.wire.sent_at`: the response is timed from the
  driver's sending), so both request hops are then the way back and the event loop's lateness;
  against another endpoint they include the way there too;
- `stream, per event`: a turn's message_stop minus first event, per event the SDK yielded
  (SSE decoding and parsing into objects, `to_dict`, the loop's handling, the event loop);
- `tool, start to end`: a call's run beyond its drawn duration (asyncio timers, task start).

Measured on their own:

- `event loop lateness`: how late a 10 ms sleep wakes on the run's event loop while it runs
  (`LagSampler`): what every timer and task start (a tool's, a wake's) waits beyond its time;
- `live run, % of one core`: the CPU the live run's process used over its wall time (near 100:
  the harness, not the path, is what is measured);
- `SDK parsing, per event`: the official SDK reading a recorded stream from memory (no network:
  an httpx2 mock transport), per event, with `to_dict` as the live driver calls it.
"""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa

from toolturn.fidelity.pairing import plain_frame
from toolturn.live.in_memory_sdk import in_memory_client, read_events
from toolturn.model.model import MockModel
from toolturn.model.response import StreamResponse, Turn
from toolturn.model.tool_inputs import tool_inputs
from toolturn.scenario.schema import Scenario
from toolturn.wire.sse import encode_stream

NS_PER_MS = 1_000_000
SAMPLE_S = 0.01
REQUEST_KEY = ["profile", "policy", "session_id", "request_index"]


@dataclass(frozen=True, slots=True)
class Hop:
    name: str
    count: int
    median_ms: float
    p95_ms: float


def _hop(name: str, values_ms: np.ndarray) -> Hop:
    values = values_ms[~np.isnan(values_ms)]
    if values.size == 0:
        return Hop(name, 0, math.nan, math.nan)
    return Hop(name, int(values.size), float(np.percentile(values, 50, method="higher")),
               float(np.percentile(values, 95, method="higher")))


class LagSampler:
    """Samples the event loop's lateness while it runs: sleeps `SAMPLE_S` again and again and
    keeps how much later than asked each sleep woke."""

    def __init__(self) -> None:
        self.late_ns: list[int] = []
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._sample())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _sample(self) -> None:
        asked_ns = round(SAMPLE_S * 1e9)
        while True:
            before = time.monotonic_ns()
            await asyncio.sleep(SAMPLE_S)
            self.late_ns.append(time.monotonic_ns() - before - asked_ns)


def table_hops(
    sim_tables: dict[str, pa.Table], live_tables: dict[str, pa.Table], speed: float
) -> list[Hop]:
    """The hops measured from paired requests, turns and calls."""
    scale = NS_PER_MS * speed  # scenario ns of a live run -> wall-clock ms
    requests = _paired(sim_tables["requests"], live_tables["requests"], REQUEST_KEY)
    answered = requests[requests["first_event_ns_sim"].notna()
                        & requests["first_event_ns_live"].notna()]
    wait = ((answered["first_event_ns_live"] - answered["sent_ns_live"])
            - (answered["first_event_ns_sim"] - answered["sent_ns_sim"])).astype("float64") / scale
    first = (answered["request_index"] == 1).to_numpy(dtype=bool)
    turns = _paired(sim_tables["turns"], live_tables["turns"], ["profile", "policy", "session_id",
                                                                 "turn_index"])
    streamed = turns[turns["message_stop_ns_sim"].notna() & turns["message_stop_ns_live"].notna()
                     & (turns["n_attempts_sim"] == 1) & (turns["n_attempts_live"] == 1)]
    events = _events_per_turn(live_tables["requests"], streamed)
    stream_diff = ((streamed["message_stop_ns_live"] - streamed["first_event_ns_live"])
                   - (streamed["message_stop_ns_sim"] - streamed["first_event_ns_sim"]))
    per_event = stream_diff.astype("float64").to_numpy() / scale / np.maximum(events, 1)
    tools = _paired(sim_tables["tools"], live_tables["tools"], ["profile", "policy", "session_id",
                                                                 "tool_use_id"])
    ran = tools[tools["start_ns_sim"].notna() & tools["start_ns_live"].notna()
                & (tools["outcome_sim"] == tools["outcome_live"])
                & tools["synthetic_cause_sim"].isna() & tools["synthetic_cause_live"].isna()]
    run_diff = ((ran["end_ns_live"] - ran["start_ns_live"])
                - (ran["end_ns_sim"] - ran["start_ns_sim"])).astype("float64") / scale
    return [
        _hop("request, first of a session", wait.to_numpy()[first]),
        _hop("request, later", wait.to_numpy()[~first]),
        _hop("stream, per event", per_event),
        _hop("tool, start to end", run_diff.to_numpy()),
    ]


def _paired(sim: pa.Table, live: pa.Table, key: list[str]) -> pd.DataFrame:
    return plain_frame(sim).merge(plain_frame(live), on=key, suffixes=("_sim", "_live"))


def _events_per_turn(live_requests: pa.Table, turns: pd.DataFrame) -> np.ndarray:
    """The live stream events of each of `turns` (single-attempt turns: their one request)."""
    frame = plain_frame(live_requests)
    counts = frame.groupby(["profile", "policy", "session_id", "turn_index"], observed=True)[
        "n_events"
    ].sum()
    keys = list(zip(turns["profile"], turns["policy"], turns["session_id"], turns["turn_index"],
                    strict=True))
    return np.array([counts.get(key, 0) for key in keys], dtype="float64")


def cpu_hop(wall_s: float, cpu_s: float) -> Hop:
    """The share of one core the live run used (client, embedded server and tools in one
    process), in percent: near 100, the harness is the bottleneck and every hop above waits for
    the processor, not for the network or the model."""
    share = 100.0 * cpu_s / wall_s if wall_s > 0 else math.nan
    return Hop("live run, % of one core", 1, share, share)


def lag_hop(sampler: LagSampler) -> Hop:
    return _hop("event loop lateness", np.array(sampler.late_ns, dtype="float64") / NS_PER_MS)


def sdk_parsing_hop(scenario: Scenario, repeats: int = 20) -> Hop:
    """The SDK's cost per stream event, reading a response of the scenario's model from memory:
    `repeats` readings of the first stream its first session's first turn gets."""
    model = MockModel(scenario.model, scenario.seed, tool_inputs(scenario.tool_specs))
    body = {"model": model.name, "max_tokens": 4096, "stream": True,
            "messages": [{"role": "user", "content": "Prompt 1 of session 0."}],
            "tools": [tool.to_api() for tool in scenario.tool_definitions()]}
    response = model.respond(body, Turn(0, 0, 1))
    if not isinstance(response, StreamResponse):
        return Hop("SDK parsing, per event", 0, math.nan, math.nan)
    payload = encode_stream(event for event in response.events if event["type"] != "error")
    return asyncio.run(_time_sdk(body, payload, repeats))


async def _time_sdk(body: dict[str, object], payload: bytes, repeats: int) -> Hop:
    per_event_ms = []
    async with in_memory_client(payload) as client:
        for _ in range(repeats):
            stream = await client.messages.create(**body)  # type: ignore[call-overload]
            start = time.perf_counter_ns()
            count = await read_events(stream)
            per_event_ms.append((time.perf_counter_ns() - start) / max(count, 1) / NS_PER_MS)
    return _hop("SDK parsing, per event", np.array(per_event_ms))
