"""The simpy engine: exact timing arithmetic, common random numbers, determinism, pairing, strict
mode, the endpoint, arrivals and the stream's decision points."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.engine_runs import (
    ARITHMETIC,
    STRICT,
    default_scenario,
    dict_rows,
    first_turn,
    run,
    scenario_of,
)
from tests.helpers.model_support import timed
from toolturn.engine.arrivals import ClosedLoop, OpenLoop, arrivals_for, poisson_arrivals
from toolturn.engine.clock import Clock
from toolturn.engine.draws import SessionDraws
from toolturn.engine.endpoint import SimEndpoint
from toolturn.engine.feed_points import feed_points
from toolturn.engine.simulation import SimulationResult
from toolturn.engine.strict import StrictModeStop
from toolturn.model.config import EndpointConfig
from toolturn.model.endpoint import Endpoint
from toolturn.model.model import MockModel
from toolturn.model.response import StreamResponse, Turn
from toolturn.model.tool_inputs import tool_inputs
from toolturn.scenario.loader import with_overrides
from toolturn.scenario.schema import Scenario
from toolturn.user.draws import UserDraws

# ----- the arithmetic check -----


def test_ttfts_is_the_tool_block_stop_under_streaming_and_message_stop_otherwise() -> None:
    scenario = scenario_of(ARITHMETIC)
    model = MockModel(scenario.model, scenario.seed, tool_inputs(scenario.tool_specs))
    messages = [{"role": "user", "content": "x"}]
    request = {"model": model.name, "max_tokens": 4096, "messages": messages}
    response = model.respond(request, Turn(0, 0, 1))
    assert isinstance(response, StreamResponse)
    events = timed(response)
    tool_index = next(
        e["index"] for _, e in events
        if e["type"] == "content_block_start" and e["content_block"]["type"] == "tool_use"
    )
    tool_stop_ns = next(
        t for t, e in events if e["type"] == "content_block_stop" and e["index"] == tool_index
    )
    message_stop_ns = next(t for t, e in events if e["type"] == "message_stop")
    assert 0 < tool_stop_ns < message_stop_ns

    streaming = first_turn(run(scenario, "streaming"))
    assert streaming["request_sent_ns"] == 0
    assert streaming["ttfts_ns"] == tool_stop_ns
    assert streaming["message_stop_ns"] == message_stop_ns
    for policy in ("at_message_stop", "serial"):
        turn = first_turn(run(scenario, policy))
        assert turn["ttfts_ns"] == message_stop_ns
    # The tool runs 400 ms; the turn ends when both the stream and the tool are done.
    assert streaming["turn_end_ns"] == max(message_stop_ns, tool_stop_ns + 400_000_000)


def test_start_lag_is_zero_under_streaming_and_the_rest_of_the_message_otherwise() -> None:
    scenario = scenario_of(ARITHMETIC)
    streaming = dict_rows(run(scenario, "streaming").rows["tools"])
    naive = dict_rows(run(scenario, "at_message_stop").rows["tools"])
    assert [row["start_lag_ns"] for row in streaming] == [0]
    turn = first_turn(run(scenario, "at_message_stop"))
    assert naive[0]["start_lag_ns"] == turn["message_stop_ns"] - naive[0]["block_stop_ns"] > 0


# ----- common random numbers and determinism -----


def model_draws_of_turn_one(result: SimulationResult) -> dict[int, tuple[Any, ...]]:
    """Per session, what the model said and when, for turn 1's first attempt."""
    requests = {
        row["session_id"]: row for row in dict_rows(result.rows["requests"])
        if row["turn_index"] == 1 and row["attempt"] == 1
    }
    tools = {}
    for row in dict_rows(result.rows["tools"]):
        if row["turn_index"] == 1:
            sent_ns = requests[row["session_id"]]["sent_ns"]
            tools.setdefault(row["session_id"], []).append(
                (row["tool_use_id"], row["tool_name"], row["block_stop_ns"] - sent_ns)
            )
    return {
        session: (
            row["status"], row["fault"], row["output_tokens"], row["n_events"],
            row["first_event_ns"] - row["sent_ns"] if row["first_event_ns"] is not None else None,
            tuple(tools.get(session, ())),
        )
        for session, row in requests.items()
    }


def test_policies_see_the_same_model_draws_for_turn_one_of_every_session() -> None:
    scenario = default_scenario(24)
    streaming = model_draws_of_turn_one(run(scenario, "streaming"))
    for policy in ("at_message_stop", "serial"):
        assert model_draws_of_turn_one(run(scenario, policy)) == streaming
    assert len(streaming) == 24


def test_the_same_seed_gives_the_same_rows_and_another_seed_does_not() -> None:
    scenario = default_scenario(12)
    first, again = run(scenario), run(scenario)
    assert first.rows == again.rows
    other = run(with_overrides(scenario, seed=scenario.seed + 1))
    assert dict_rows(other.rows["turns"]) != dict_rows(first.rows["turns"])


# ----- pairing and strict mode -----


def test_every_request_of_a_default_run_passes_the_pairing_check() -> None:
    result = run(default_scenario(30))
    assert result.pairing_violations == 0
    statuses = {row["status"] for row in dict_rows(result.rows["requests"])}
    assert "400" not in statuses
    assert len(dict_rows(result.rows["sessions"])) == 30
    assert all(row["outcome"] == "completed" for row in dict_rows(result.rows["sessions"]))


@pytest.mark.usefixtures("damaged_resume")
def test_strict_mode_stops_with_the_seed_and_session_that_reproduce_it() -> None:
    with pytest.raises(StrictModeStop) as stopped:
        run(scenario_of(STRICT))
    message = str(stopped.value)
    assert "seed 11" in message
    assert f"session {stopped.value.session_id}" in message
    assert "policy streaming" in message
    assert stopped.value.seed == 11


@pytest.mark.usefixtures("damaged_resume")
def test_without_strict_mode_the_same_damage_is_repaired_and_recorded() -> None:
    result = run(scenario_of(STRICT, **{"runtime.strict": False}))
    assert result.pairing_violations == 0
    assert dict_rows(result.rows["repairs"])
    kinds = {row["kind"] for row in dict_rows(result.rows["repairs"])}
    assert kinds
    turns_with_repairs = sum(row["n_repairs"] for row in dict_rows(result.rows["turns"]))
    assert turns_with_repairs == len(dict_rows(result.rows["repairs"]))


def test_an_id_given_twice_is_run_once_and_never_reaches_the_transcript() -> None:
    # Three calls per response, each a copy of the one before (the first, of the transcript's
    # last id): even in strict mode the runtime neither runs an id twice nor needs a repair.
    result = run(scenario_of(STRICT, **{"model.script.tool_calls": 3}))
    assert result.sessions_finished == 3 and result.pairing_violations == 0
    assert dict_rows(result.rows["repairs"]) == []
    turn_ids = [(row["turn_index"], row["tool_use_id"]) for row in dict_rows(result.rows["tools"])]
    assert len(turn_ids) == len(set(turn_ids))


# ----- load: the endpoint, arrivals, horizon -----


def test_a_refusing_endpoint_answers_with_its_status_and_the_request_is_retried() -> None:
    scenario = default_scenario(16).model_copy(deep=True)
    data = scenario.model_dump(mode="python", exclude_unset=True)
    data["model"]["endpoint"] = {"capacity": 2, "overflow": "refuse", "refuse_status": 429}
    data["load"]["concurrency"] = 8
    result = run(Scenario.model_validate(data))
    requests = dict_rows(result.rows["requests"])
    refused = [row for row in requests if row["fault"] == "endpoint_refused"]
    assert refused and all(row["status"] == "429" for row in refused)
    retried = [row for row in requests if row["retries"] > 0]
    assert retried


def test_a_queueing_endpoint_delays_first_events_but_loses_no_request() -> None:
    data = default_scenario(16).model_dump(mode="python", exclude_unset=True)
    data["load"]["concurrency"] = 8
    data["model"]["faults"] = {}
    data["session"]["interrupts"] = {"probability": 0.0}
    unlimited = run(Scenario.model_validate(data))
    data["model"]["endpoint"] = {"capacity": 1, "overflow": "queue"}
    queued = run(Scenario.model_validate(data))
    assert len(dict_rows(queued.rows["requests"])) == len(dict_rows(unlimited.rows["requests"]))
    assert {row["status"] for row in dict_rows(queued.rows["requests"])} == {"200"}

    def mean_wait(result: SimulationResult) -> float:
        rows = dict_rows(result.rows["requests"])
        return sum(row["first_event_ns"] - row["sent_ns"] for row in rows) / len(rows)

    assert mean_wait(queued) > 2 * mean_wait(unlimited)


def test_open_loop_sessions_arrive_when_due_and_a_horizon_cuts_the_run() -> None:
    data = default_scenario(20).model_dump(mode="python", exclude_unset=True)
    data["load"] = {"mode": "open", "sessions": 20, "arrival_rate_per_s": 0.5, "horizon_s": 30}
    scenario = Scenario.model_validate(data)
    result = run(scenario)
    arrivals = poisson_arrivals(scenario.seed, 20, 0.5)
    sessions = dict_rows(result.rows["sessions"])
    horizon = 30_000_000_000
    due = [t for t in arrivals if t < horizon]
    assert [row["arrival_ns"] for row in sorted(sessions, key=lambda r: r["session_id"])] == due
    assert all(row["start_ns"] == row["arrival_ns"] for row in sessions)
    assert any(row["outcome"] == "horizon" for row in sessions)
    assert all(row["turn_end_ns"] <= horizon for row in dict_rows(result.rows["turns"]))
    assert any(row["outcome"] == "horizon" for row in dict_rows(result.rows["turns"]))


def test_arrival_schedules() -> None:
    scenario = default_scenario(5)
    assert arrivals_for(scenario.load, 1, 32.0) == ClosedLoop(5, 32)
    slow, fast = poisson_arrivals(3, 50, 1.0), poisson_arrivals(3, 50, 2.0)
    assert list(slow) == sorted(slow) and slow[-1] > fast[-1]
    # The same unit-rate draws, scaled: the rate halves every time (to the ns).
    assert all(abs(a - 2 * b) <= 2 * 50 for a, b in zip(slow, fast, strict=True))
    data = scenario.model_dump(mode="python", exclude_unset=True)
    data["load"] = {"mode": "open", "sessions": 2, "trace_ms": [0, 1.5, 9]}
    trace = Scenario.model_validate(data).load
    assert arrivals_for(trace, 1, None) == OpenLoop((0, 1_500_000))


def test_call_at_runs_actions_in_time_then_call_order_and_a_past_time_now() -> None:
    env = Clock()
    seen: list[tuple[int, str]] = []

    def note(label: str) -> None:
        seen.append((env.now, label))

    def later() -> None:
        note("later")
        env.call_at(env.now - 5, note, "past")  # already passed: runs now, after what is due

    env.call_at(20, note, "b")
    env.call_at(10, later)
    env.call_at(20, note, "c")
    env.timeout(10).callbacks.append(lambda _: note("timeout"))
    env.run()
    assert seen == [(10, "later"), (10, "timeout"), (10, "past"), (20, "b"), (20, "c")]


def test_endpoint_queue_is_first_come_first_served() -> None:
    env = Clock()
    endpoint = SimEndpoint(env, Endpoint(EndpointConfig(capacity=1, overflow="queue")))
    assert endpoint.decide() == "admit"
    endpoint.admit()
    assert endpoint.decide() == "queue"
    first, second = endpoint.enqueue(), endpoint.enqueue()
    endpoint.withdraw(first)
    endpoint.release()
    assert second.triggered and not first.triggered
    assert endpoint.in_flight == 1
    endpoint.release()
    assert endpoint.in_flight == 0


# ----- the stream's decision points and the session's draws -----


def test_feed_points_are_tool_block_stops_and_the_last_event() -> None:
    # message_start, text start / stop, tool_use start / delta / stop (5), message_delta, _stop
    assert feed_points((5,), 8) == [5, 7]
    assert feed_points((5,), 6) == [5]  # cut right after the tool_use block's stop
    assert feed_points((), 0) == []


def test_session_draws_are_keyed_not_ordered() -> None:
    scenario = default_scenario(5)
    one, other = SessionDraws(scenario, 3, 4), SessionDraws(scenario, 3, 4)
    plan = one.tool_plan("Read", "toolu_x")
    other.tool_plan("Grep", "toolu_y")  # another draw first changes nothing
    assert other.tool_plan("Read", "toolu_x") == plan
    user_one, user_other = UserDraws(scenario, 3, 4), UserDraws(scenario, 3, 4)
    assert [user_one.interrupt(turn) for turn in range(1, 40)] == [
        user_other.interrupt(turn) for turn in range(1, 40)
    ]
    with pytest.raises(ValueError, match="turn by turn"):
        user_one.interrupt(42)
    assert user_one.prompt_count() == user_other.prompt_count()
    assert [user_one.think_time_ns() for _ in range(3)] == [
        user_other.think_time_ns() for _ in range(3)
    ]
    assert 0.0 <= one.retry_jitter(1, 1) < scenario.runtime.retries.jitter


def test_attachment_draws_are_keyed_by_turn_whichever_turns_ask() -> None:
    scenario = default_scenario(5)

    def arrivals(draws: UserDraws, turn: int, count: int) -> list[tuple[int, str]]:
        turn_arrivals = draws.attachments(turn)
        assert turn_arrivals is not None
        return [turn_arrivals.next() for _ in range(count)]

    every, some = UserDraws(scenario, 3, 4), UserDraws(scenario, 3, 4)
    all_turns = {turn: arrivals(every, turn, 3) for turn in range(1, 40)}
    # Turns without tools ask for nothing: the other turns' arrivals (the first drawn ahead in
    # blocks of turns, the later ones from the turn's own stream) are the same.
    for turn in (2, 17, 18, 39):
        assert arrivals(some, turn, 3) == all_turns[turn]
    assert arrivals(UserDraws(scenario, 3, 4), 17, 1) == all_turns[17][:1]
    assert len({first for first, *_ in all_turns.values()}) == 39  # each turn its own draws
    kinds = {kind for turn in all_turns.values() for _, kind in turn}
    assert kinds <= set(scenario.session.attachments.rates()) and len(kinds) > 1
    silent = scenario.session.attachments.model_copy(
        update={"queued_user_input": 0.0, "notification": 0.0, "file_change": 0.0}
    )
    quiet = scenario.model_copy(
        update={"session": scenario.session.model_copy(update={"attachments": silent})}
    )
    assert UserDraws(quiet, 3, 4).attachments(1) is None
