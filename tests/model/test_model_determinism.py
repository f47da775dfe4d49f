"""Deterministic per seed, and common random numbers: a turn's draws depend on the turn only."""

from __future__ import annotations

from tests.helpers.model_support import (
    TEXT_AND_TWO_CALLS,
    body,
    events_of,
    make_model,
    respond,
    tool_use_starts,
)
from toolturn.model.response import HttpError, StreamResponse, Turn

GENERATED = {
    "kind": "generated",
    "thinking_tokens": 20,
    "tool_calls": {"kind": "uniform", "low": 1, "high": 3},
}
FAULTS = {"cut_mid_tool_json": 0.2, "stall": 0.1, "unknown_tool": 0.2, "error_api": 0.1}


def test_same_seed_same_responses_other_seed_other_responses() -> None:
    one, two, other = (make_model(seed, script=GENERATED, faults=FAULTS) for seed in (5, 5, 6))
    for session in range(30):
        assert respond(one, session) == respond(two, session)
    assert [respond(one, s) for s in range(30)] != [respond(other, s) for s in range(30)]


def test_a_turn_gets_the_same_draws_whatever_was_asked_before() -> None:
    fresh = make_model(script=GENERATED, faults=FAULTS)
    busy = make_model(script=GENERATED, faults=FAULTS)
    for session in range(50):
        respond(busy, session, turn=3)
        respond(busy, session + 1000, turn=0, attempt=2)
    for session in range(50):
        assert respond(busy, session) == respond(fresh, session)


def test_attempts_and_turns_draw_apart() -> None:
    model = make_model(script=GENERATED)
    assert respond(model, 1, turn=1, attempt=0) != respond(model, 1, turn=1, attempt=1)
    assert respond(model, 1, turn=1) != respond(model, 1, turn=2)


def test_turning_one_fault_up_moves_no_other_draw() -> None:
    """Common random numbers across configurations: where the new fault does not fire, the
    response is exactly the one without it."""
    calm = make_model(script=TEXT_AND_TWO_CALLS, faults={"stall": 0.3})
    stormy = make_model(
        script=TEXT_AND_TWO_CALLS, faults={"stall": 0.3, "http_529": 0.5, "cut_mid_text": 0.3}
    )
    compared = 0
    for session in range(100):
        mine = respond(stormy, session)
        if set(mine.faults) <= {"stall"}:
            assert mine == respond(calm, session)
            compared += 1
    assert compared > 20


def test_tool_ids_are_unique_within_a_session() -> None:
    model = make_model(script={**GENERATED, "end_probability": 0.0})
    ids = []
    for turn in range(30):
        for attempt in range(2):
            response = model.respond(body(model), Turn(7, turn, attempt))
            ids += [block["id"] for block in tool_use_starts(events_of(response))]
    assert len(ids) == len(set(ids)) > 60


def test_an_origin_shifts_every_time_and_nothing_else() -> None:
    model = make_model(script=GENERATED, faults={**FAULTS, "http_529": 0.3})
    origin = 123_456_789_000
    shifted = 0
    for session in range(40):
        request = body(model)
        plain = model.respond(request, Turn(session, 0))
        moved = model.respond(request, Turn(session, 0), origin_ns=origin)
        if isinstance(plain, HttpError):
            assert isinstance(moved, HttpError)
            assert moved.at_ns == plain.at_ns + origin and moved.body == plain.body
            continue
        assert isinstance(plain, StreamResponse) and isinstance(moved, StreamResponse)
        assert moved.times == [t + origin for t in plain.times]
        assert moved.end_ns == plain.end_ns + origin
        assert moved.events == plain.events
        assert (moved.ending, moved.faults) == (plain.ending, plain.faults)
        shifted += 1
    assert 0 < shifted < 40  # both kinds of answer were seen
    refusal = model.refuse(Turn(1, 0), origin_ns=origin)
    assert refusal.at_ns == model.refuse(Turn(1, 0)).at_ns + origin
