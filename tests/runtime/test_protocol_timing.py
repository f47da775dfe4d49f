"""When a call is known complete on each protocol (toolturn/runtime/protocol_timing.py): the pure
function the simulator uses equals the real path (each protocol's wire codec, then the runtime's
accumulator for it) on every fault's streams and every shipped scenario's, and the retimed
stream tells the loop so at that instant."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.model.test_model_tool_stops import _faulty_model, _streams, scanned_tool_stops
from toolturn.model.model import MockModel
from toolturn.model.response import StreamResponse
from toolturn.model.tool_inputs import tool_inputs
from toolturn.runtime.accumulator import StreamAccumulator
from toolturn.runtime.openai.chat import ChatAccumulator
from toolturn.runtime.openai.responses import ResponsesAccumulator
from toolturn.runtime.protocol_timing import Retimed, call_timings, retimed
from toolturn.scenario.loader import load_scenario
from toolturn.wire.codecs import ChatCodec, ResponsesCodec

ROOT = Path(__file__).resolve().parents[2]
CHAT_BODY: dict[str, Any] = {"model": "m", "messages": [], "stream": True}
RESPONSES_BODY: dict[str, Any] = {"model": "m", "input": [], "stream": True}


def misfiring_model() -> MockModel:
    """The faulty model whose calls' arguments often go on after their object (misfires)."""
    model = _faulty_model()
    faults = model.config.faults.model_copy(update={"tool_json_continues": 0.5})
    config = model.config.model_copy(update={"faults": faults})
    return MockModel(config, model.root_seed, model.tools)


def every_stream() -> list[StreamResponse]:
    """The faulty model's streams (every cut, error and stall), with and without arguments that
    go on after their object, and each shipped scenario's."""
    streams = _streams(_faulty_model(), 40) + _streams(misfiring_model(), 40)
    for path in sorted((ROOT / "scenarios").glob("*.toml")):
        scenario = load_scenario(path)
        model = MockModel(scenario.model, scenario.seed, tool_inputs(scenario.tool_specs))
        streams += _streams(model, 8)
    return streams


STREAMS = every_stream()


def chat_path(response: StreamResponse, speculative: bool) -> dict[str, dict[str, int]]:
    """By call id: the Messages event index at which the Chat Completions accumulator, fed the
    codec's chunks, said `complete`, `parsed` and `changed`."""
    chunks = ChatCodec().encoder(response, CHAT_BODY)
    accumulator = ChatAccumulator(speculative=speculative)
    seen: dict[str, dict[str, int]] = {}
    for position, event in enumerate(response.events):
        for chunk in chunks.feed(event):
            if isinstance(chunk, dict) and "error" in chunk:
                accumulator.feed(chunk)
                return seen
            for notice in accumulator.feed(chunk):
                seen.setdefault(notice.call.id, {})[notice.kind] = position
    return seen


def responses_path(response: StreamResponse) -> dict[str, int]:
    """By call id: the Messages event index at which the Responses accumulator, fed the codec's
    events, returned the call's done item."""
    events = ResponsesCodec().encoder(response, RESPONSES_BODY)
    accumulator = ResponsesAccumulator()
    seen: dict[str, int] = {}
    for position, event in enumerate(response.events):
        for out in events.feed(event):
            item = accumulator.feed(out)
            if item is not None and item.is_call:
                seen[str(item.item["call_id"])] = position
    return seen


def test_the_streams_cover_faults_and_several_calls() -> None:
    assert {stream.ending for stream in STREAMS} >= {"complete", "cut", "error_event"}
    assert sum(len(stream.tool_stops) > 1 for stream in STREAMS) > 20


@pytest.mark.parametrize("speculative", [False, True])
def test_chat_completion_instants_are_the_codec_and_accumulator_s(speculative: bool) -> None:
    chat_start = "at_parsed_json" if speculative else "at_next_call"
    parsed = changed = 0
    for response in STREAMS:
        real = chat_path(response, speculative)
        for timing in call_timings(response.events, "openai-chat", chat_start):
            notices = real.get(timing.tool_use_id, {})
            assert timing.known == notices.get("complete"), response.events
            assert timing.parsed == notices.get("parsed")
            assert timing.changed == notices.get("changed")
            parsed += timing.parsed is not None
            changed += timing.changed is not None
        known = {t.tool_use_id for t in call_timings(response.events, "openai-chat", chat_start)
                 if t.known is not None}
        assert known == {call for call, seen in real.items() if "complete" in seen}
    assert parsed > changed > 0 if speculative else parsed == changed == 0


def test_responses_instants_are_the_block_stops_as_the_codec_and_accumulator_say() -> None:
    for response in STREAMS:
        real = responses_path(response)
        timings = call_timings(response.events, "openai-responses")
        assert {t.tool_use_id: t.known for t in timings} == real
        assert all(t.known == t.stop for t in timings)
        assert retimed(response.events, response.times, "openai-responses") is None


def test_the_retimed_chat_stream_is_a_legal_messages_stream_with_its_stops_moved() -> None:
    moved = 0
    for response in STREAMS:
        for chat_start in ("at_next_call", "at_parsed_json"):
            out = retimed(response.events, response.times, "openai-chat", chat_start)
            if out is None:
                assert not response.tool_stops
                continue
            assert out.times == sorted(out.times)  # still in time order
            assert out.tool_stops == scanned_tool_stops(out.events)
            fed_as_the_loop_is(out)  # raises on an illegal stream
            moved += out.times != response.times
    assert moved > 0


def fed_as_the_loop_is(out: Retimed) -> StreamAccumulator:
    """`out` through a Messages accumulator, each retraction's block reopened just before its
    delta (as `ToolTurnLoop.arguments_changed` does)."""
    accumulator = StreamAccumulator()
    retractions = dict(out.retractions)
    for position, event in enumerate(out.events):
        if position in retractions:
            accumulator.reopen(retractions[position])
        accumulator.feed(event)
    return accumulator


def misfiring_stream() -> tuple[list[dict[str, Any]], list[int]]:
    """Two calls; the first's arguments parse as an object, then more comes (a misfire)."""
    def block(index: int, call_id: str, pieces: list[str]) -> list[dict[str, Any]]:
        return [
            {"type": "content_block_start", "index": index,
             "content_block": {"type": "tool_use", "id": call_id, "name": "Read", "input": {}}},
            *({"type": "content_block_delta", "index": index,
               "delta": {"type": "input_json_delta", "partial_json": piece}} for piece in pieces),
            {"type": "content_block_stop", "index": index},
        ]
    events = [
        {"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [],
            "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 0}}},
        *block(0, "toolu_a", ['{"path": "a"}', ' ', '{"x": 1}']),
        *block(1, "toolu_b", ['{"path": "b"}']),
        {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
         "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ]
    return events, [10 * position for position in range(len(events))]


def test_a_misfire_is_found_and_the_call_started_when_really_complete() -> None:
    events, times = misfiring_stream()
    first, second = call_timings(events, "openai-chat", "at_parsed_json")
    assert (first.parsed, first.changed, first.known) == (2, 4, 6)  # parsed, then changed
    assert (second.parsed, second.changed, second.known) == (7, None, 9)
    out = retimed(events, times, "openai-chat", "at_parsed_json")
    assert out is not None and out.misfired == ("toolu_a",)
    # The misfired call's stop comes at its parse (the speculative start), then again when the
    # next call begins; the other's at its parse. The loop hears of the change at its delta.
    stops = [(out.events[i]["index"], out.times[i]) for i in out.tool_stops]
    assert stops == [(0, times[2]), (0, times[6]), (1, times[7])]
    [(position, block)] = out.retractions
    assert block == 0 and out.times[position] == out.times[position + 1] == times[4]
    assert out.events[position] is events[3] and out.events[position + 1] is events[4]
    done = {d.index: d for d in fed_as_the_loop_is(out).completed}
    assert done[0].input_error is not None and done[0].raw_input == '{"path": "a"} {"x": 1}'
    assert done[1].input_error is None
    assert retimed(events, times, "openai-chat", "at_next_call").misfired == ()  # type: ignore[union-attr]
