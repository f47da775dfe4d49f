"""Every model fault, often, under every policy, with several calls per response: the runtime
ends every session with legal requests and the rows fill, whatever the fault does. (A fault that
only broke with two calls in one response once crashed the whole run.)"""

from __future__ import annotations

import pytest

from sim.model.faults import ALL_FAULTS
from sim.scenario.schema import ALL_POLICIES, Scenario
from tests.test_engine import default_scenario, run

SESSIONS = 8


def storm(faults: dict[str, float]) -> Scenario:
    data = default_scenario(SESSIONS).model_dump(mode="python", exclude_unset=True)
    data["load"]["concurrency"] = SESSIONS
    data["model"]["script"]["tool_calls"] = {"kind": "uniform", "low": 1, "high": 4}
    data["model"]["script"]["max_turns"] = 6
    data["model"]["faults"] = {**faults, "fallback": "haiku"}
    data["runtime"]["fallback_after_overloads"] = 2
    return Scenario.model_validate(data)


@pytest.mark.parametrize("fault", ALL_FAULTS)
def test_one_fault_half_the_time(fault: str) -> None:
    scenario = storm({fault: 0.5})
    for policy in ALL_POLICIES:
        result = run(scenario, policy)
        assert result.sessions_finished == SESSIONS, (fault, policy)
        assert result.pairing_violations == 0, (fault, policy)


def test_every_fault_at_once() -> None:
    scenario = storm({fault: 0.1 for fault in ALL_FAULTS})
    for policy in ALL_POLICIES:
        result = run(scenario, policy)
        assert result.sessions_finished == SESSIONS, policy
        faults = {row["fault"] for row in result.rows["requests"]} - {None}
        assert len(faults) >= 5, faults  # the storm did hit


def test_the_user_and_the_tools_misbehave_at_once() -> None:
    # Interrupts in both phases, attachments, every tool failing or hanging a third of the time
    # and asking permission (denied half the time), with model faults on top.
    data = storm({fault: 0.05 for fault in ALL_FAULTS}).model_dump(mode="python")
    data["session"]["interrupts"]["probability"] = 0.3
    data["session"]["attachments"] = {"queued_user_input": 1, "notification": 1, "file_change": 1}
    data["tools"]["override"] = {
        name: {
            "failures": {"error": 0.1, "exception": 0.1, "hang": 0.1},
            "permission": {"mode": "ask", "deny_probability": 0.5},
        }
        for name in ("Read", "Grep", "Glob", "Bash", "Edit", "Write", "WebFetch", "Task")
    }
    scenario = Scenario.model_validate(data)
    for policy in ALL_POLICIES:
        result = run(scenario, policy)
        assert result.sessions_finished == SESSIONS, policy
        assert result.pairing_violations == 0, policy
        outcomes = {row["outcome"] for row in result.rows["tools"]}
        assert {"success", "error", "permission_denied"} <= outcomes, outcomes
