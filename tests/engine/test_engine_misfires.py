"""Misfires simulated end to end (issue 34): under Chat Completions with `chat_start =
"at_parsed_json"`, a call whose arguments go on after a complete object (the model fault
`tool_json_continues`) is started at the parse, cancelled when the text goes on (loop rule 17),
and answered once, with the malformed-arguments error, when it is really complete."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from tests.engine.test_engine_fault_storm import (
    SESSIONS,
    UNFINISHED,
    own_duplicates,
    storm,
    unexpected,
)
from tests.engine.test_protocols import TWO_CALLS
from tests.helpers.engine_runs import dict_rows, scenario_of
from toolturn.engine.runner import run_scenario
from toolturn.engine.simulation import simulate
from toolturn.model.faults import ALL_FAULTS
from toolturn.runtime.loop import ToolTurnLoop
from toolturn.runtime.recovery import PROFILES
from toolturn.runtime.repair import check_pairing
from toolturn.scenario.schema import ALL_POLICIES, Scenario


def tables(chat_start: str, policy: str = "streaming") -> dict[str, list[dict[str, Any]]]:
    scenario = scenario_of(TWO_CALLS, **{
        "model.protocol": "openai-chat", "runtime.chat_start": chat_start,
        "runtime.policies": [policy], "model.faults.tool_json_continues": 1.0,
    })
    return {name: table.to_pylist() for name, table in run_scenario(scenario).tables("r").items()}


def test_a_misfired_start_is_cancelled_and_the_call_answered_once() -> None:
    out = tables("at_parsed_json")
    first = next(turn for turn in out["turns"] if turn["turn_index"] == 1)
    assert first["misfires"] == 2 and first["n_tool_calls"] == 2
    rows = [row for row in out["tools"] if row["turn_index"] == 1]
    assert all(row["misfired"] for row in rows)
    wasted = [row for row in rows if row["synthetic_cause"] == "misfire"]
    answered = [row for row in rows if row["synthetic_cause"] is None]
    assert len(wasted) == len(answered) == 2
    assert {row["tool_use_id"] for row in wasted} == {row["tool_use_id"] for row in answered}
    for row in wasted:
        # Started at the parse, before the model's stream ended, and cancelled soon after.
        assert row["start_ns"] is not None and row["start_ns"] < first["message_stop_ns"]
        assert row["start_ns"] < row["end_ns"] < row["start_ns"] + 400 * 1_000_000
    for row in answered:
        assert row["outcome"] == "invalid_input" and row["start_ns"] is None
    # The turn's first tool start is a kept one: none (both calls failed without running).
    assert first["first_tool_start_ns"] is None
    # Every call answered once: the next request passed the API's pairing, nothing repaired.
    assert out["repairs"] == []
    assert all(request["fault"] in (None, "tool_json_continues,tool_json_continues")
               for request in out["requests"])
    assert [turn["outcome"] for turn in out["turns"]] == ["completed", "completed"]


def test_at_next_call_the_same_draws_do_not_misfire() -> None:
    speculative, at_next_call = tables("at_parsed_json"), tables("at_next_call")
    assert all(turn["misfires"] == 0 for turn in at_next_call["turns"])
    assert not any(row["misfired"] for row in at_next_call["tools"])
    # The same calls, each answered with the same malformed-arguments error, and the same faults.
    calls = [(r["tool_use_id"], r["outcome"]) for r in at_next_call["tools"]]
    assert calls == [(r["tool_use_id"], r["outcome"]) for r in speculative["tools"]
                     if r["synthetic_cause"] != "misfire"]
    assert [r["fault"] for r in at_next_call["requests"]] == [
        r["fault"] for r in speculative["requests"]]
    assert at_next_call["requests"][0]["fault"] == "tool_json_continues,tool_json_continues"


@pytest.mark.parametrize("policy", ["at_message_stop", "serial"])
def test_the_baselines_never_speculate(policy: str) -> None:
    # chat_start is streaming's: a baseline starts nothing before the finish reason, so the
    # same draws give no misfire, no cancelled run, and the calls known as at_next_call says.
    baseline, at_next_call = tables("at_parsed_json", policy), tables("at_next_call", policy)
    assert baseline == at_next_call
    assert all(turn["misfires"] == 0 for turn in baseline["turns"])
    assert not any(row["misfired"] or row["synthetic_cause"] for row in baseline["tools"])


def test_misfires_in_a_storm_of_every_fault_leave_every_call_answered_once(
    kept_loops: list[ToolTurnLoop],
) -> None:
    # Misfires among cuts, duplicate ids, fallbacks, interrupts and permission asks, under
    # every profile and policy: every session ends, every transcript is legal as it stands.
    data = storm({fault: 0.1 for fault in ALL_FAULTS}).model_dump(mode="python")
    data["model"]["faults"]["tool_json_continues"] = 0.5
    data["runtime"]["chat_start"] = "at_parsed_json"
    data["session"]["interrupts"]["probability"] = 0.3
    data["tools"]["override"] = {
        name: {"permission": {"mode": "ask", "deny_probability": 0.2}} for name in ("Read", "Bash")
    }
    scenario = Scenario.model_validate(data)
    misfires = 0
    for profile, policy in itertools.product(PROFILES, ALL_POLICIES):
        kept_loops.clear()
        result = simulate(scenario, policy, scenario.load.levels[0], profile=profile,
                          protocol="openai-chat")
        where = (policy, profile)
        assert result.sessions_finished == SESSIONS, where
        assert result.pairing_violations == 0 or own_duplicates(kept_loops), where
        assert dict_rows(result.rows["repairs"]) == [], where
        for loop in kept_loops:
            assert unexpected(loop, check_pairing(loop.messages)) == [], where
            assert [r for r in loop.call_records() if r.state in UNFINISHED] == [], where
        turns = dict_rows(result.rows["turns"])
        misfires += sum(turn["misfires"] for turn in turns)
        cancelled = [row for row in dict_rows(result.rows["tools"])
                     if row["synthetic_cause"] == "misfire"]
        assert all(row["misfired"] for row in cancelled), where
        if policy != "streaming":  # the baselines never start a call before the response ends
            assert cancelled == [] and not any(turn["misfires"] for turn in turns), where
    assert misfires > 0
