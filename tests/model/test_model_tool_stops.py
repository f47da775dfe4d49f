"""`StreamResponse.tool_stops`: where the model says its tool_use blocks stop is where a scan of
the events finds them, under every fault that cuts or ends a stream, and with keep-alive pings
inserted (the stops move with their events); the engine's decision points are made of them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolturn.engine.feed_points import feed_points
from toolturn.model.config import LatencyConfig
from toolturn.model.model import MockModel
from toolturn.model.response import StreamResponse, Turn
from toolturn.model.tool_inputs import tool_inputs
from toolturn.scenario.loader import load_scenario

GOLDEN = Path(__file__).parents[1] / "golden"


def scanned_tool_stops(events: list[dict[str, Any]]) -> tuple[int, ...]:
    """The indices of the tool_use blocks' stops, found by a pass over the events."""
    stops = []
    tool_blocks: set[int] = set()
    for position, event in enumerate(events):
        kind = event["type"]
        if kind == "content_block_start":
            if event["content_block"]["type"] == "tool_use":
                tool_blocks.add(event["index"])
        elif kind == "content_block_stop" and event["index"] in tool_blocks:
            stops.append(position)
    return tuple(stops)


def _streams(model: MockModel, turns: int) -> list[StreamResponse]:
    body = {
        "model": model.name,
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": "go"}],
    }
    responses = [
        model.respond(body, Turn(session, turn, attempt))
        for session in range(turns)
        for turn in range(3)
        for attempt in range(2)
    ]
    return [response for response in responses if isinstance(response, StreamResponse)]


def _faulty_model(**latency: float) -> MockModel:
    scenario = load_scenario(GOLDEN / "closed_faults.toml")
    config = scenario.model
    faults = config.faults.model_copy(
        update={
            "cut_mid_text": 0.2,
            "cut_mid_tool_json": 0.2,
            "cut_after_tool_use_stop": 0.2,
            "cut_before_message_stop": 0.1,
            "error_overloaded": 0.1,
            "stall": 0.2,
        }
    )
    config = config.model_copy(update={"faults": faults, "latency": LatencyConfig(**latency)})
    return MockModel(config, scenario.seed, tool_inputs(scenario.tool_specs))


def test_tool_stops_are_where_the_events_say() -> None:
    streams = _streams(_faulty_model(), 60)
    endings = {stream.ending for stream in streams}
    assert endings == {"complete", "cut", "error_event"}
    with_tools = 0
    for stream in streams:
        assert stream.tool_stops is not None
        assert stream.tool_stops == scanned_tool_stops(stream.events)
        with_tools += bool(stream.tool_stops)
    assert with_tools > 20


def test_the_tool_stops_move_with_their_events_when_pings_come_in() -> None:
    streams = _streams(_faulty_model(ping_interval_ms=50.0), 20)
    pinged = [s for s in streams if sum(e["type"] == "ping" for e in s.events) > 1]
    assert pinged
    assert sum(bool(stream.tool_stops) for stream in pinged) > 5
    for stream in pinged:
        assert stream.tool_stops == scanned_tool_stops(stream.events)
        last = len(stream.events) - 1
        assert feed_points(stream.tool_stops, len(stream.events))[-1] == last
