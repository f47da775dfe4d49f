"""Generated and scripted streams are legal, exact Messages API streams: the shapes, the order,
the chunking of tool input JSON, and a round trip through our SSE codec and the SDK's."""

from __future__ import annotations

import copy
import hashlib
import itertools
import json

import numpy as np
import pytest

from tests.helpers.model_support import (
    SPECS,
    TEXT_AND_TWO_CALLS,
    block_starts,
    body,
    events_of,
    feed_ours,
    json_pieces,
    make_model,
    one_call_script,
    respond,
    sdk_snapshot,
    stop_reason,
    stream_of,
    timed,
    tool_json_of,
    without_pings,
)
from toolturn.distributions import Uniform
from toolturn.model.chunking import tool_json
from toolturn.model.ids import api_id
from toolturn.model.response import Turn
from toolturn.model.stream import _chunk_gaps
from toolturn.runtime.accumulator import merge_block_messages
from toolturn.wire.sse import SSEDecoder, encode_stream

GENERATED = {
    "kind": "generated",
    "end_probability": 0.2,
    "thinking_tokens": {"kind": "uniform", "low": 0, "high": 40},
    "text_tokens": {"kind": "uniform", "low": 0, "high": 30},
    "tool_calls": {"kind": "uniform", "low": 1, "high": 4},
    "final_text_tokens": {"kind": "uniform", "low": 1, "high": 60},
}


@pytest.mark.parametrize("streaming", ["pairs", "fine_grained"])
def test_generated_streams_are_accepted_by_our_accumulator_and_the_sdks(streaming: str) -> None:
    model = make_model(script=GENERATED, tool_json_streaming=streaming)
    for session in range(60):
        response = stream_of(respond(model, session))
        assert response.ending == "complete" and response.faults == ()
        times = response.times
        assert times == sorted(times) and response.end_ns == times[-1]
        events = events_of(response)
        ours = feed_ours(events)
        assert ours.finished and ours.open_indices == ()
        sse = encode_stream(events)
        assert SSEDecoder().feed(sse) == events
        sdk = sdk_snapshot(sse)
        assert ours.snapshot() == sdk
        merged = merge_block_messages(ours.completed)
        assert merged == [{"role": "assistant", "content": sdk["content"]}]


def test_text_deltas_are_shared_and_left_as_made_by_the_runtime_and_the_sdk() -> None:
    model = make_model(script=GENERATED)
    streams = [events_of(stream_of(respond(model, session))) for session in range(20)]
    before = copy.deepcopy(streams)
    for events in streams:
        feed_ours(events)
        sdk_snapshot(encode_stream(events))
    assert streams == before
    deltas = [
        event
        for events in streams
        for event in events
        if event["type"] == "content_block_delta" and event["delta"]["type"] == "text_delta"
    ]
    # One event object per block index and text, however often generated text repeats the
    # phrase (toolturn.model.shared_events).
    by_text = {(event["index"], event["delta"]["text"]): event for event in deltas}
    assert all(by_text[event["index"], event["delta"]["text"]] is event for event in deltas)
    assert len(by_text) < len(deltas)
    stops = [e for events in streams for e in events if e["type"] == "content_block_stop"]
    assert all(stop is stops[0] for stop in stops if stop["index"] == stops[0]["index"])


def test_the_event_sequence_is_the_apis() -> None:
    model = make_model(script=TEXT_AND_TWO_CALLS)
    events = events_of(respond(model, 1))
    kinds = [e["type"] for e in events]
    assert kinds[:3] == ["message_start", "content_block_start", "ping"]
    assert kinds[-2:] == ["message_delta", "message_stop"]
    start = events[0]["message"]
    assert start["id"].startswith("msg_01") and len(start["id"]) == len("msg_01") + 22
    assert start["model"] == "claude-sonnet-4-5" and start["content"] == []
    assert start["role"] == "assistant" and start["stop_reason"] is None
    assert start["usage"]["input_tokens"] > 0 and start["usage"]["output_tokens"] == 1
    # Blocks in index order, each start ... deltas ... stop, never interleaved.
    index = -1
    for event in events:
        if event["type"] == "content_block_start":
            assert event["index"] == index + 1
            index = event["index"]
        elif event["type"] in ("content_block_delta", "content_block_stop"):
            assert event["index"] == index
    assert [b["type"] for b in block_starts(events)] == ["text", "tool_use", "tool_use"]
    first, second = block_starts(events)[1:]
    assert first == {"type": "tool_use", "id": first["id"], "name": "Read", "input": {}}
    assert first["id"].startswith("toolu_01") and first["id"] != second["id"]
    delta = events[-2]
    assert delta["delta"] == {"stop_reason": "tool_use", "stop_sequence": None}
    assert delta["usage"]["output_tokens"] > 0
    text = feed_ours(events).completed[0].block["text"]
    assert text == "Let me read both files before I change anything."


def test_thinking_streams_its_text_then_its_signature() -> None:
    script = {
        "kind": "explicit",
        "responses": [
            {
                "blocks": [
                    {
                        "type": "thinking",
                        "thinking": "The user wants a fix.",
                        "signature": "EqQBCgIYAhIM",
                    },
                    {"type": "text", "text": "Done."},
                ]
            }
        ],
    }
    events = events_of(respond(make_model(script=script), 1))
    deltas = [e["delta"] for e in events if e["type"] == "content_block_delta" and e["index"] == 0]
    assert [d["type"] for d in deltas[:-1]] == ["thinking_delta"] * (len(deltas) - 1)
    assert deltas[-1] == {"type": "signature_delta", "signature": "EqQBCgIYAhIM"}
    assert "".join(d["thinking"] for d in deltas[:-1]) == "The user wants a fix."
    assert stop_reason(events) == "end_turn"
    block = feed_ours(events).completed[0].block
    assert block == {
        "type": "thinking",
        "thinking": "The user wants a fix.",
        "signature": "EqQBCgIYAhIM",
    }


def test_tool_json_in_pairs_is_exact_and_breaks_only_inside_or_between_pairs() -> None:
    tool_input = {
        "file_path": "/repo/ü.py",
        "old_string": "a = 1\n",
        "new_string": "a = 2\n",
        "replace_all": False,
    }
    script = one_call_script("Edit", tool_input)
    model = make_model(script=script)
    for session in range(20):
        events = events_of(respond(model, session))
        pieces = json_pieces(events, 0)
        assert pieces[0] == ""  # the API opens every tool input with an empty delta
        assert (
            "".join(pieces) == tool_json(tool_input) == json.dumps(tool_input, ensure_ascii=False)
        )
        assert feed_ours(events).completed[0].block["input"] == tool_input
        # Each pair arrives in a burst: every pair boundary is a piece boundary.
        ends, offset = set(), 0
        for piece in pieces:
            offset += len(piece)
            ends.add(offset)
        joined = tool_json(tool_input)
        for key in list(tool_input)[1:]:
            assert joined.index(f', "{key}"') in ends


def test_fine_grained_tool_json_arrives_a_few_characters_at_a_time() -> None:
    model = make_model(script=TEXT_AND_TWO_CALLS, tool_json_streaming="fine_grained")
    events = events_of(respond(model, 3))
    pieces = json_pieces(events, 2)
    assert pieces[0] == "" and all(1 <= len(p) <= 7 for p in pieces[1:])
    assert json.loads("".join(pieces)) == {"file_path": "/repo/b.py", "offset": 10, "limit": 200}


def test_a_pair_arrives_after_its_generation_pause_then_as_a_burst() -> None:
    tool_input = {"content": "x" * 400, "file_path": "/repo/big.txt"}
    script = one_call_script("Write", tool_input)
    latency = {
        "ttft": {"kind": "fixed", "ms": 100},
        "token_gap": {"kind": "fixed", "ms": 10},
        "tool_use_pause": {"kind": "fixed", "ms": 50},
        "block_gap": {"kind": "fixed", "ms": 0},
        "json_chunk_gap": {"kind": "fixed", "ms": 1},
    }
    response = stream_of(respond(make_model(script=script, latency=latency), 1))
    deltas = [(t, e) for t, e in timed(response) if e["type"] == "content_block_delta"]
    ms = 1_000_000
    assert deltas[0][0] == 150 * ms  # the empty opening delta comes with the block start
    first_pair = '{"content": "' + "x" * 400 + '"'
    tokens = -(-len(first_pair) // 4)
    assert deltas[1][0] == (150 + 10 * tokens) * ms  # the whole pair was generated first
    # Then its fragments follow one chunk gap apart, until the pair is complete.
    burst, sent = [deltas[1][0]], len(deltas[1][1]["delta"]["partial_json"])
    for at, event in deltas[2:]:
        if sent >= len(first_pair):
            break
        burst.append(at)
        sent += len(event["delta"]["partial_json"])
    assert sent == len(first_pair) and len(burst) > 5
    assert {b - a for a, b in itertools.pairwise(burst)} == {1 * ms}


def test_usage_counts_the_request_and_the_output() -> None:
    model = make_model(script=TEXT_AND_TWO_CALLS)
    short = events_of(respond(model, 1))
    long = events_of(model.respond(body(model, system="x" * 4000), Turn(1, 1)))
    assert (
        long[0]["message"]["usage"]["input_tokens"]
        >= short[0]["message"]["usage"]["input_tokens"] + 1000
    )
    assert short[-2]["usage"]["output_tokens"] == long[-2]["usage"]["output_tokens"]


def test_the_requests_max_tokens_truncates_the_answer() -> None:
    script = {"kind": "generated", "end_probability": 1.0, "final_text_tokens": 300}
    model = make_model(script=script)
    events = events_of(model.respond(body(model, max_tokens=50), Turn(1, 1)))
    assert stop_reason(events) == "max_tokens" and events[-2]["usage"]["output_tokens"] == 50
    text = feed_ours(events).completed[0].block["text"]
    assert 45 <= len(text.split()) <= 50


def test_long_silences_carry_keepalive_pings() -> None:
    latency = {"tool_use_pause": {"kind": "fixed", "ms": 25_000}, "ping_interval_ms": 10_000}
    response = stream_of(respond(make_model(script=TEXT_AND_TWO_CALLS, latency=latency), 1))
    pings = [t for t, e in timed(response) if e["type"] == "ping"]
    assert len(pings) == 1 + 2 * 2  # the opening ping, then two in each 25 s pause
    events = response.events
    calm = events_of(respond(make_model(script=TEXT_AND_TWO_CALLS), 1))
    assert without_pings(events) == without_pings(calm)


def test_generated_calls_use_the_catalogue_and_valid_inputs() -> None:
    script = {
        "kind": "generated",
        "end_probability": 0.0,
        "tool_mix": {"Grep": 1, "Bash": 3},
        "tool_calls": 3,
    }
    model = make_model(script=script)
    names = []
    for session in range(100):
        events = events_of(respond(model, session))
        for index, block in enumerate(block_starts(events)):
            if block["type"] == "tool_use":
                names.append(block["name"])
                tool_input = json.loads(tool_json_of(events, index))
                assert SPECS[block["name"]].input_problem(tool_input) is None
    assert set(names) == {"Grep", "Bash"} and len(names) == 300
    assert 0.68 < names.count("Bash") / len(names) < 0.82  # weight 3 of 4, 300 draws


def test_a_generated_session_ends_at_the_configured_rate_and_by_max_turns() -> None:
    model = make_model(script={"kind": "generated", "end_probability": 0.25, "max_turns": 5})
    ends = [stop_reason(events_of(respond(model, s, turn=1))) == "end_turn" for s in range(800)]
    assert abs(sum(ends) / len(ends) - 0.25) < 0.05
    assert stop_reason(events_of(respond(model, 1, turn=4))) == "end_turn"


@pytest.mark.parametrize("count", [0, 1, 3, 17, 400])
def test_burst_gaps_drawn_in_python_are_numpys_uniform_draws(count: int) -> None:
    # A uniform gap is drawn as one `random` call and Python arithmetic; the integers must be
    # those of the distribution's numpy sampler from the same generator state.
    gap = Uniform(kind="uniform", low_ms=0.5, high_ms=3.0)
    for seed in range(5):
        assert _chunk_gaps(gap, np.random.default_rng(seed), count, 1.0) == (
            gap.sample_many_ns(np.random.default_rng(seed), count).tolist()
        )
    # Scaled by the endpoint's factor, or another kind: numpy's own path.
    scaled = _chunk_gaps(gap, np.random.default_rng(1), count, 1.5)
    expected = np.rint(gap.sample_many_ns(np.random.default_rng(1), count) * 1.5)
    assert scaled == expected.astype(np.int64).tolist()


def test_api_ids_are_blake2b_of_their_parts_in_base62() -> None:
    # The id copies a hash made once with its digest size: the same as the plain construction.
    digest = hashlib.blake2b(b"toolu:9:4:2:0:1", digest_size=22).digest()
    expected = "".join(
        "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"[byte % 62]
        for byte in digest
    )
    assert api_id("toolu", 9, 4, 2, 0, 1) == f"toolu_01{expected}"
