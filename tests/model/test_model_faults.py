"""Each fault fires at its configured rate and produces the exact wire shape.

Rates: with a fixed seed, 600 units per fault at p = 0.25 (SD of the observed rate 0.018); the
tolerance is 0.07, about four SDs, so the test is deterministic and would still pass under any
seed with probability above 0.9999. Each fault is tested alone, on a script with exactly one
unit of its kind per response (two for the per-call faults), so every unit is reached.
"""

from __future__ import annotations

import hashlib
import itertools
import json

import pytest

from tests.helpers.model_support import (
    MESSAGES,
    PREVIOUS_ID,
    SEED,
    SPECS,
    TEXT_AND_TWO_CALLS,
    block_starts,
    events_of,
    feed_ours,
    http_error_of,
    make_model,
    one_call_script,
    parses,
    respond,
    sdk_snapshot,
    stop_reason,
    stream_of,
    tool_json_of,
    without_pings,
)
from toolturn.distributions import ms_to_ns
from toolturn.model.config import FaultsConfig
from toolturn.model.faults import ALL_FAULTS, FaultDice, faults_on, keyed_uniform
from toolturn.model.model import UNKNOWN_TOOL_NAME
from toolturn.model.response import HttpError, StreamResponse, Turn
from toolturn.runtime.pairing import check_pairing
from toolturn.wire.sse import SSEDecoder, encode_stream

P = 0.25
RESPONSES = 600
TOLERANCE = 0.07

# fault -> units per response in TEXT_AND_TWO_CALLS
UNITS = {
    "http_429": 1,
    "http_529": 1,
    "http_500": 1,
    "error_overloaded": 1,
    "error_api": 1,
    "cut_before_first_block": 1,
    "cut_mid_text": 1,
    "cut_mid_tool_json": 2,
    "cut_after_tool_use_stop": 2,
    "cut_before_message_stop": 1,
    "stall": 1,
    "malformed_tool_json": 2,
    "duplicate_tool_id": 2,
    "tool_json_continues": 2,
    "unknown_tool": 2,
    "invalid_tool_input": 2,
    "max_tokens_mid_tool_use": 1,
    "end_turn_with_tool_use": 1,
}


def test_every_fault_kind_is_covered_here_and_configurable() -> None:
    assert set(UNITS) == set(ALL_FAULTS)
    assert set(ALL_FAULTS) <= set(FaultsConfig.model_fields)


def faulty(fault: str, p: float = P, **faults: object) -> object:
    return make_model(script=TEXT_AND_TWO_CALLS, faults={fault: p, **faults})


@pytest.mark.parametrize("fault", sorted(UNITS))
def test_each_fault_fires_at_its_rate(fault: str) -> None:
    model = faulty(fault)
    fired = 0
    for session in range(RESPONSES):
        response = respond(model, session)
        fired += response.faults.count(fault)
        assert set(response.faults) <= {fault}
    units = RESPONSES * UNITS[fault]
    if fault in ("cut_mid_tool_json", "cut_after_tool_use_stop"):
        # A cut in the first call hides the second call's draw: count per response instead.
        assert abs(fired / RESPONSES - (1 - (1 - P) ** 2)) < TOLERANCE
    else:
        assert abs(fired / units - P) < TOLERANCE


def test_no_fault_fires_at_probability_zero_and_all_fire_at_one() -> None:
    model = make_model(script=TEXT_AND_TWO_CALLS)
    assert all(respond(model, s).faults == () for s in range(100))
    assert respond(faulty("cut_mid_text", 1.0), 1).faults == ("cut_mid_text",)


@pytest.mark.parametrize(
    ("fault", "status", "error_type", "message", "retry_after"),
    [
        ("http_429", 429, "rate_limit_error", None, True),
        ("http_529", 529, "overloaded_error", "Overloaded", True),
        ("http_500", 500, "api_error", "Internal server error", False),
    ],
)
def test_http_faults_answer_before_streaming_as_the_api(
    fault: str, status: int, error_type: str, message: str | None, retry_after: bool
) -> None:
    error = http_error_of(respond(faulty(fault, 1.0, retry_after_ms=2500), 1))
    assert error.status == status and error.faults == (fault,)
    assert set(error.body) == {"type", "error", "request_id"} and error.body["type"] == "error"
    assert error.body["error"]["type"] == error_type
    assert message is None or error.body["error"]["message"] == message
    assert error.body["request_id"].startswith("req_01")
    assert error.retry_after_ns == (ms_to_ns(2500) if retry_after else None)
    assert 0 < error.at_ns < 10_000 * 1_000_000


@pytest.mark.parametrize(
    ("fault", "error_type", "message"),
    [
        ("error_overloaded", "overloaded_error", "Overloaded"),
        ("error_api", "api_error", "Internal server error"),
    ],
)
def test_error_events_end_the_stream_after_200(fault: str, error_type: str, message: str) -> None:
    model = faulty(fault, 1.0)
    for session in range(30):
        response = stream_of(respond(model, session))
        events = events_of(response)
        assert response.ending == "error_event" and response.faults == (fault,)
        assert events[-1] == {"type": "error", "error": {"type": error_type, "message": message}}
        assert events[0]["type"] == "message_start"
        assert "message_stop" not in [e["type"] for e in events]
        assert response.end_ns == response.times[-1]
        ours = feed_ours(events)
        assert ours.error == events[-1]["error"]
        assert SSEDecoder().feed(encode_stream(events)) == events


def cut(fault: str, session: int = 1) -> tuple[StreamResponse, list[dict[str, object]]]:
    response = stream_of(respond(faulty(fault, 1.0), session))
    assert response.ending == "cut" and response.faults == (fault,)
    events = events_of(response)
    assert "message_stop" not in [e["type"] for e in events]
    feed_ours(events)  # a cut stream is a legal prefix
    sdk_snapshot(encode_stream(events))
    return response, without_pings(events)


def test_cut_before_the_first_block() -> None:
    response, events = cut("cut_before_first_block")
    assert [e["type"] for e in events] == ["message_start"]
    assert response.end_ns >= response.times[-1]


def test_cut_mid_text_leaves_the_text_block_open() -> None:
    for session in range(20):
        _, events = cut("cut_mid_text", session)
        assert events[-1]["type"] in ("content_block_start", "content_block_delta")
        assert events[-1]["index"] == 0 and len(block_starts(events)) == 1
        assert feed_ours(events).open_indices == (0,)


def test_cut_mid_tool_json_leaves_an_incomplete_prefix() -> None:
    full = json.dumps({"file_path": "/repo/a.py"})
    for session in range(20):
        _, events = cut("cut_mid_tool_json", session)
        last = events[-1]
        assert last["type"] == "content_block_delta" and last["delta"]["type"] == "input_json_delta"
        index = last["index"]
        assert index in (1, 2)
        sent = tool_json_of(events, index)
        if index == 1:
            assert full.startswith(sent) and sent != full
        assert not parses(sent)


def test_cut_right_after_a_tool_use_block_stops() -> None:
    _, events = cut("cut_after_tool_use_stop")
    assert events[-1] == {"type": "content_block_stop", "index": 1}  # the first call's block
    assert [done.block["type"] for done in feed_ours(events).completed] == ["text", "tool_use"]


def test_cut_before_message_stop() -> None:
    _, events = cut("cut_before_message_stop")
    assert events[-1]["type"] == "message_delta"


def test_a_stall_is_silence_then_a_resume_or_a_cut() -> None:
    model = faulty(
        "stall", 1.0, stall_duration={"kind": "fixed", "ms": 40_000}, stall_resume_probability=0.5
    )
    calm = make_model(script=TEXT_AND_TWO_CALLS)
    endings = set()
    for session in range(40):
        response = stream_of(respond(model, session))
        assert response.faults == ("stall",)
        endings.add(response.ending)
        times = response.times
        gaps = [b - a for a, b in itertools.pairwise(times)]
        if response.ending == "complete":
            assert max(gaps) >= ms_to_ns(40_000)  # no ping inside the stall
            calm_events = events_of(respond(calm, session))
            assert without_pings(events_of(response)) == without_pings(calm_events)
        else:
            assert response.ending == "cut"
            assert response.end_ns - times[-1] >= ms_to_ns(40_000)
    assert endings == {"complete", "cut"}


def test_malformed_tool_json_does_not_parse() -> None:
    model = faulty("malformed_tool_json", 1.0)
    events = events_of(respond(model, 1))
    assert not parses(tool_json_of(events, 1)) and not parses(tool_json_of(events, 2))
    done = feed_ours(events).completed
    assert done[1].input_error is not None and done[1].raw_input == tool_json_of(events, 1)


def _json_deltas(events: list[dict[str, object]], index: int) -> list[str]:
    return [e["delta"]["partial_json"] for e in events  # type: ignore[index]
            if e["type"] == "content_block_delta" and e["index"] == index]


def test_tool_json_continues_streams_a_second_object_after_the_first() -> None:
    calm = make_model(script=TEXT_AND_TWO_CALLS)
    model = faulty("tool_json_continues", 1.0)
    for session in range(10):
        response = respond(model, session)
        assert response.faults == ("tool_json_continues", "tool_json_continues")
        events, calm_events = events_of(response), events_of(respond(calm, session))
        for index in (1, 2):
            pieces, calm_pieces = _json_deltas(events, index), _json_deltas(calm_events, index)
            # The call's own deltas, unchanged, then its object once more, in deltas of its own.
            assert pieces[:len(calm_pieces)] == calm_pieces
            first = "".join(calm_pieces)
            assert parses(first) and "".join(pieces) == first + first
            assert not parses(tool_json_of(events, index))
        done = feed_ours(events).completed
        assert done[1].input_error is not None and done[1].raw_input == tool_json_of(events, 1)
        # The response's own draws did not move: its text and its calls are the calm one's.
        assert block_starts(events) == block_starts(calm_events)
        assert [e for e in events if e["type"] == "content_block_delta" and e["index"] == 0] == [
            e for e in calm_events if e["type"] == "content_block_delta" and e["index"] == 0]


def test_tool_json_continues_is_deterministic_and_draws_nothing_at_zero() -> None:
    model = faulty("tool_json_continues", P)
    assert [respond(model, s) for s in range(20)] == [respond(model, s) for s in range(20)]
    # At probability 0 it draws nothing: another fault's responses are byte for byte the same.
    other = make_model(script=TEXT_AND_TWO_CALLS, faults={"cut_mid_tool_json": P})
    with_zero = make_model(
        script=TEXT_AND_TWO_CALLS, faults={"cut_mid_tool_json": P, "tool_json_continues": 0.0}
    )
    assert [respond(other, s) for s in range(40)] == [respond(with_zero, s) for s in range(40)]


def test_duplicate_tool_ids_copy_an_earlier_id() -> None:
    events = events_of(respond(faulty("duplicate_tool_id", 1.0), 1))
    first, second = block_starts(events)[1:]
    assert first["id"] == PREVIOUS_ID  # nothing earlier in the response: the transcript's id
    assert second["id"] == PREVIOUS_ID


def test_a_duplicate_in_a_first_request_with_one_call_has_nothing_to_copy() -> None:
    model = make_model(
        script=one_call_script("Glob", {"pattern": "*"}), faults={"duplicate_tool_id": 1.0}
    )
    first_request = {
        "model": model.name,
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": "hi"}],
    }
    response = stream_of(model.respond(first_request, Turn(1, 0)))
    assert response.faults == ()


def test_unknown_tool_names_a_tool_that_does_not_exist() -> None:
    events = events_of(respond(faulty("unknown_tool", 1.0), 1))
    names = [b["name"] for b in block_starts(events)[1:]]
    assert names == [UNKNOWN_TOOL_NAME, UNKNOWN_TOOL_NAME] and UNKNOWN_TOOL_NAME not in SPECS


def test_invalid_tool_input_fails_the_tools_schema() -> None:
    events = events_of(respond(faulty("invalid_tool_input", 1.0), 1))
    for index in (1, 2):
        tool_input = json.loads(tool_json_of(events, index))
        assert SPECS["Read"].input_problem(tool_input) is not None


def test_max_tokens_stops_inside_a_tool_use() -> None:
    model = faulty("max_tokens_mid_tool_use", 1.0)
    for session in range(20):
        response = stream_of(respond(model, session, max_tokens=3000))
        events = events_of(response)
        assert response.ending == "complete"
        assert stop_reason(events) == "max_tokens" and events[-2]["usage"]["output_tokens"] == 3000
        last_block = len(block_starts(events)) - 1
        assert block_starts(events)[-1]["type"] == "tool_use" and last_block >= 1
        sent = tool_json_of(events, last_block)
        assert not parses(sent)
        sdk_snapshot(encode_stream(events))
        # Our accumulator reads an empty input as {} (as the API does), anything else as an error.
        assert sent == "" or feed_ours(events).completed[-1].input_error is not None


def test_end_turn_although_a_tool_use_is_present() -> None:
    events = events_of(respond(faulty("end_turn_with_tool_use", 1.0), 1))
    assert stop_reason(events) == "end_turn"
    assert [b["type"] for b in block_starts(events)] == ["text", "tool_use", "tool_use"]


def test_the_earliest_of_several_cuts_wins_and_alone_is_reported() -> None:
    model = make_model(
        script=TEXT_AND_TWO_CALLS,
        faults={
            "cut_mid_text": 1.0,
            "cut_before_message_stop": 1.0,
            "cut_after_tool_use_stop": 1.0,
        },
    )
    response = stream_of(respond(model, 1))
    assert response.faults == ("cut_mid_text",)


def test_a_transcript_breaking_the_pairing_rules_gets_the_apis_400() -> None:
    model = make_model(script=TEXT_AND_TWO_CALLS, faults={"http_529": 1.0})
    broken = MESSAGES[:2]  # the tool_use is left without its result
    error = model.respond({"model": model.name, "max_tokens": 100, "messages": broken}, Turn(1, 1))
    assert isinstance(error, HttpError) and error.status == 400 and error.faults == ()
    assert error.body["error"] == {
        "type": "invalid_request_error",
        "message": check_pairing(broken)[0],
    }
    assert "tool_use" in error.body["error"]["message"]


def test_a_request_missing_a_required_field_gets_400() -> None:
    model = make_model()
    error = model.respond({"model": model.name, "messages": MESSAGES}, Turn(1, 1))
    assert isinstance(error, HttpError) and error.status == 400
    assert error.body["error"] == {
        "type": "invalid_request_error",
        "message": "max_tokens: Field required",
    }


def test_an_unknown_model_name_gets_404() -> None:
    model = make_model()
    error = model.respond(
        {"model": "claude-nonexistent", "max_tokens": 1, "messages": MESSAGES}, Turn(1, 1)
    )
    assert isinstance(error, HttpError) and error.status == 404
    assert error.body["error"] == {
        "type": "not_found_error",
        "message": "model: claude-nonexistent",
    }


def test_the_fallback_model_answers_without_faults_at_its_own_speed() -> None:
    model = make_model(
        script=TEXT_AND_TWO_CALLS,
        faults={"http_529": 1.0, "fallback": "haiku"},
        latency={"ttft": {"kind": "fixed", "ms": 9_000}},
    )
    assert isinstance(respond(model, 1), HttpError)
    assert model.fallback_name == "claude-haiku-4-5"
    starts = []
    for session in range(200):
        request = {"model": model.fallback_name, "max_tokens": 8192, "messages": MESSAGES}
        response = stream_of(model.respond(request, Turn(session, 1)))
        assert response.faults == () and response.model == "claude-haiku-4-5"
        starts.append(response.times[0])
    starts.sort()
    assert 400e6 < starts[100] < 600e6  # Haiku's ~0.5 s to first token, not Sonnet's 1.5 s


def test_keyed_uniforms_are_uniform_and_depend_on_the_key_only() -> None:
    draws = [keyed_uniform(f"7:stall:{unit}") for unit in range(20_000)]
    counts = [0] * 10
    for draw in draws:
        assert 0.0 <= draw < 1.0
        counts[int(draw * 10)] += 1
    assert all(abs(count - 2_000) < 200 for count in counts)  # about 4.5 SDs
    assert keyed_uniform("7:stall:3") == draws[3]


def test_keyed_uniforms_are_blake2b_of_the_key_with_the_fault_person() -> None:
    # The draw copies a hash made once with its parameters; it must equal the plain construction
    # (the draws, and so every run's faults, depend on it bit for bit).
    for key in ("7:stall:3", "20261130:cut_mid_tool_json:4:2:0:1", ""):
        digest = hashlib.blake2b(key.encode(), digest_size=8, person=b"sim.fault").digest()
        assert keyed_uniform(key) == (int.from_bytes(digest, "little") >> 11) * 2.0**-53


def test_firing_lists_the_units_whose_keyed_draw_is_below_the_probability() -> None:
    probabilities = {kind: 0.0 for kind in ALL_FAULTS} | {"cut_mid_tool_json": 0.5}
    dice = FaultDice(11, probabilities, Turn(3, 2, 1))
    hits = [
        unit for unit in range(40) if keyed_uniform(f"11:cut_mid_tool_json:3:2:1:{unit}") < 0.5
    ]
    assert 5 < len(hits) < 35  # both outcomes occur, so the comparison means something
    assert dice.firing("cut_mid_tool_json", 40) == hits
    assert dice.firing("cut_mid_text", 40) == []  # a kind that is off draws nothing
    assert dice.firing("cut_mid_tool_json", 0) == []


def test_fault_dice_know_the_kinds_that_can_fire() -> None:
    probabilities = {kind: 0.0 for kind in ALL_FAULTS} | {"stall": 0.5, "cut_mid_text": 1.0}
    dice = FaultDice(SEED, probabilities, Turn(1, 1))
    assert dice.on == faults_on(probabilities) == {"stall", "cut_mid_text"}


@pytest.mark.parametrize("fault", sorted(UNITS))
def test_a_kind_that_can_fire_but_does_not_moves_no_draw(fault: str) -> None:
    # A response skips, without asking, every kind that cannot fire (`FaultDice.on`): asking
    # one that can, and does not fire, must leave the response as it is with every kind off.
    quiet, asked = make_model(script=TEXT_AND_TWO_CALLS), faulty(fault, 1e-12)
    for session in range(20):
        expected, got = respond(quiet, session), respond(asked, session)
        assert isinstance(got, StreamResponse) and isinstance(expected, StreamResponse)
        assert (got.times, got.events, got.faults) == (expected.times, expected.events, ())
