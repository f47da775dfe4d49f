"""What the engine does for the runtime's commands and the user's behaviour: permission delays,
hung tools, attachments while tools run, interrupts, the rows it fills."""

from __future__ import annotations

import pytest

from tests.helpers.engine_runs import (
    ARITHMETIC,
    default_scenario,
    dict_rows,
    first_turn,
    run,
    scenario_of,
)
from toolturn.engine.simulation import SimulationResult, simulate
from toolturn.metrics.collector import RunCollector
from toolturn.metrics.row_columns import with_constants
from toolturn.model.input_tokens import InputTokenCounter
from toolturn.runtime.loop import ToolTurnLoop
from toolturn.runtime.record import AttachmentAppended, Interrupt, ToolStarted
from toolturn.scenario.schema import Scenario
from toolturn.tools.execution import TOOL_TIMEOUT_NS, timeout_text

NS_PER_MS = 1_000_000


def test_an_asked_permission_delays_the_start_by_the_users_decision() -> None:
    text = ARITHMETIC.replace(
        'duration = { kind = "fixed", ms = 400 }',
        'duration = { kind = "fixed", ms = 400 }\n'
        'permission = { mode = "ask", decision_delay = { kind = "fixed", ms = 2500 } }',
    )
    tools = dict_rows(run(scenario_of(text), "streaming").rows["tools"])
    assert [row["start_ns"] - row["queued_ns"] for row in tools] == [2500 * NS_PER_MS]
    assert tools[0]["start_lag_ns"] == 2500 * NS_PER_MS
    assert tools[0]["outcome"] == "success"


def test_a_denied_permission_ends_the_call_without_starting_it() -> None:
    text = ARITHMETIC.replace(
        'duration = { kind = "fixed", ms = 400 }',
        'duration = { kind = "fixed", ms = 400 }\npermission = { mode = "deny" }',
    )
    result = run(scenario_of(text), "streaming")
    [tool] = dict_rows(result.rows["tools"])
    assert tool["outcome"] == "permission_denied" and tool["start_ns"] is None
    assert first_turn(result)["ttfts_ns"] is None


def test_a_hung_tool_times_out_after_the_generous_limit(kept_loops: list[ToolTurnLoop]) -> None:
    text = ARITHMETIC.replace(
        'duration = { kind = "fixed", ms = 400 }',
        'duration = { kind = "fixed", ms = 400 }\nfailures = { hang = 1.0 }\ncancellable = false',
    )
    [tool] = dict_rows(run(scenario_of(text), "streaming").rows["tools"])
    assert tool["outcome"] == "error"
    assert tool["end_ns"] - tool["start_ns"] == TOOL_TIMEOUT_NS
    [loop] = kept_loops
    [result] = [
        block for message in loop.messages if message["role"] == "user"
        for block in message["content"] if block["type"] == "tool_result"
    ]
    assert result["is_error"] and result["content"] == timeout_text("Lint")
    assert result["content"] == "Error: tool 'Lint' timed out after 600 s."


def test_attachments_arrive_only_while_tools_run_and_follow_the_results(
    kept_loops: list[ToolTurnLoop],
) -> None:
    data = default_scenario(12).model_dump(mode="python", exclude_unset=True)
    data["session"]["attachments"] = {
        "queued_user_input": 2.0, "notification": 2.0, "file_change": 1.0
    }
    data["session"]["interrupts"] = {"probability": 0.0}
    simulate(Scenario.model_validate(data), "streaming", 32.0)
    appended = 0
    for loop in kept_loops:
        entries = loop.record.entries
        for entry in entries:
            if type(entry) is AttachmentAppended:
                appended += 1
                arrived = entry.arrived_ns
                assert arrived is not None
                starts = [
                    e.time_ns for e in entries
                    if type(e) is ToolStarted and e.turn == entry.turn
                ]
                assert starts and min(starts) <= arrived <= entry.time_ns
        for message in loop.messages:
            if message["role"] == "user" and isinstance(message["content"], list):
                kinds = [block["type"] for block in message["content"]]
                if "tool_result" in kinds:
                    others = [i for i, k in enumerate(kinds) if k != "tool_result"]
                    assert not others or "tool_result" not in kinds[others[0]:]
    assert appended > 0


def test_interrupts_land_in_both_phases_and_are_counted(kept_loops: list[ToolTurnLoop]) -> None:
    data = default_scenario(16).model_dump(mode="python", exclude_unset=True)
    data["session"]["interrupts"] = {
        "probability": 0.6, "after": {"kind": "uniform", "low_ms": 0, "high_ms": 2000},
    }
    result = simulate(Scenario.model_validate(data), "streaming", 32.0)
    phases = {
        entry.phase for loop in kept_loops for entry in loop.record.of_kind(Interrupt)
    }
    assert {"streaming", "tools"} <= phases
    interrupts = sum(row["n_interrupts"] for row in dict_rows(result.rows["sessions"]))
    assert interrupts == sum(
        1 for loop in kept_loops for e in loop.record.entries if type(e) is Interrupt
    )
    assert any(row["outcome"] == "interrupted" for row in dict_rows(result.rows["turns"]))
    causes = {row["synthetic_cause"] for row in dict_rows(result.rows["tools"])}
    assert "user_interrupt" in causes


def test_every_column_of_every_table_is_filled_as_the_schema_wants() -> None:
    result: SimulationResult = run(default_scenario(20))
    collector = RunCollector(run_id="r", scenario="default", seed=1)
    for name in ("turns", "tools", "repairs", "requests", "sessions"):
        collector.add_columns(name, with_constants(result.rows[name], result.columns))
    tables = collector.tables()  # raises on a missing required value or a wrong type
    turns = tables["turns"].to_pylist()
    assert all(row["ttfts_ns"] is None or row["ttfts_ns"] >= 0 for row in turns)
    assert all(
        (row["ttfts_ns"] is None) == (row["first_tool_start_ns"] is None) for row in turns
    )
    for row in tables["tools"].to_pylist():
        if row["start_ns"] is not None:
            assert row["start_lag_ns"] == row["start_ns"] - row["block_stop_ns"] >= 0
    statuses = {row["status"] for row in tables["requests"].to_pylist()}
    assert "200" in statuses
    assert all(row["latency_ns"] >= 0 for row in turns)


def test_ttfts_counts_only_tools_whose_results_the_turn_keeps() -> None:
    # The primary model's stream always breaks with an overloaded error (with seed 1, after the
    # tool_use block: the call starts); the fallback model answers in full.
    scenario = scenario_of(
        ARITHMETIC,
        seed=1,
        **{
            "runtime.fallback_after_overloads": 1,
            "model.faults.error_overloaded": 1.0,
            "model.faults.fallback": "haiku",
        },
    )
    result = run(scenario, "streaming")
    abandoned, kept = dict_rows(result.rows["tools"])
    assert abandoned["synthetic_cause"] == "fallback" and abandoned["start_ns"] is not None
    assert kept["synthetic_cause"] is None and kept["start_ns"] > abandoned["start_ns"]
    turn = first_turn(result)
    assert turn["first_tool_start_ns"] == kept["start_ns"]
    assert turn["ttfts_ns"] == kept["start_ns"] - turn["request_sent_ns"]


def test_the_model_forgets_each_session_as_it_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    # Memory stays flat as sessions complete: the model's input-token memory holds a session's
    # whole transcript, so an ended session must not stay in it.
    counters: list[InputTokenCounter] = []
    original = InputTokenCounter.__init__

    def init(self: InputTokenCounter) -> None:
        original(self)
        counters.append(self)

    monkeypatch.setattr(InputTokenCounter, "__init__", init)
    result = run(default_scenario(12))
    [counter] = counters
    assert result.sessions_finished == 12 and len(counter) == 0
