"""Every model fault, often, under every policy and recovery profile, with several calls per
response: the runtime
ends every session with legal requests and a legal transcript of its own (no boundary repair,
issue 13's defect 6), one result per call, and the rows fill, whatever the fault does. (A fault
that only broke with two calls in one response once crashed the whole run.)"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

from tests.helpers.engine_runs import default_scenario, dict_rows, run
from toolturn.engine.loop_factory import LoopFactory
from toolturn.engine.simulation import SimulationResult
from toolturn.model.faults import ALL_FAULTS
from toolturn.runtime.commands import SendRequest
from toolturn.runtime.executor import CallState
from toolturn.runtime.loop import ToolTurnLoop
from toolturn.runtime.record import DuplicateToolUse
from toolturn.runtime.recovery import PROFILES, DuplicateIds
from toolturn.runtime.repair import check_pairing
from toolturn.scenario.schema import ALL_POLICIES, Scenario

SESSIONS = 8
UNFINISHED = (CallState.QUEUED, CallState.EXECUTING)
# Loop rule 2a's `unchecked` (the codex profile): a duplicate id's calls and results all stay in
# the transcript, as Codex sends them, so the requests that carry them break the Messages API's
# id rules (and the simulated API refuses them). These violations are expected, only there.
OWN_DUPLICATES = ("tool_use ids must be unique", "blocks found for `tool_use_id`",
                  "unexpected `tool_use_id` found in `tool_result` blocks")


def unexpected(loop: ToolTurnLoop, violations: list[str]) -> list[str]:
    """The violations of a transcript the loop should not have (all of them, but those of its
    own duplicate ids under `unchecked`)."""
    if loop.profile.duplicate_ids is DuplicateIds.UNCHECKED and loop.record.of_kind(
        DuplicateToolUse
    ):
        return [v for v in violations if not any(own in v for own in OWN_DUPLICATES)]
    return violations


def own_duplicates(loops: list[ToolTurnLoop]) -> bool:
    """Whether any loop kept a duplicate id on purpose (rule 2a's `unchecked`)."""
    return any(
        loop.profile.duplicate_ids is DuplicateIds.UNCHECKED and loop.record.of_kind(
            DuplicateToolUse)
        for loop in loops
    )


def storm(faults: dict[str, float]) -> Scenario:
    data = default_scenario(SESSIONS).model_dump(mode="python", exclude_unset=True)
    data["load"]["concurrency"] = SESSIONS
    data["model"]["script"]["tool_calls"] = {"kind": "uniform", "low": 1, "high": 4}
    data["model"]["script"]["max_turns"] = 6
    data["model"]["faults"] = {**faults, "fallback": "haiku"}
    data["runtime"]["fallback_after_overloads"] = 2
    return Scenario.model_validate(data)


def checked_runs(scenario: Scenario, kept: list[ToolTurnLoop]) -> Iterator[SimulationResult]:
    """The scenario under each profile and policy, each run checked: every session finished,
    every request and every final transcript legal as it stands, no repair, one result for each
    call."""
    for profile, policy in itertools.product(PROFILES, ALL_POLICIES):
        kept.clear()
        result = run(scenario, policy, profile=profile)
        where = (scenario.model.faults, policy, profile)
        assert result.sessions_finished == SESSIONS, where
        assert result.pairing_violations == 0 or own_duplicates(kept), where
        assert dict_rows(result.rows["repairs"]) == [], where
        assert len(kept) == SESSIONS, where
        for loop in kept:
            assert unexpected(loop, check_pairing(loop.messages)) == [], where
            assert loop.repairs == [], where
            # check_pairing: one result per tool_use of the transcript; and no call is left
            # without its one result (a discarded attempt's calls included).
            unfinished = [r for r in loop.call_records() if r.state in UNFINISHED]
            assert unfinished == [], where
        yield result


@pytest.mark.parametrize("fault", ALL_FAULTS)
def test_one_fault_half_the_time(fault: str, kept_loops: list[ToolTurnLoop]) -> None:
    for _ in checked_runs(storm({fault: 0.5}), kept_loops):
        pass


def test_duplicate_ids_with_cuts_leave_legal_transcripts(
    kept_loops: list[ToolTurnLoop],
) -> None:
    # Issue 13, defect 6: 42 of these 120 loops ended with a duplicate tool_use in their own
    # transcript (legal only after the boundary repair of a request that never came).
    for seed in range(5):
        data = storm({"duplicate_tool_id": 0.5, "cut_after_tool_use_stop": 0.2}).model_dump(
            mode="python", exclude_unset=True
        )
        data["seed"] = seed
        data["runtime"]["max_turns_per_prompt"] = 3
        for _ in checked_runs(Scenario.model_validate(data), kept_loops):
            pass


def test_every_fault_at_once(kept_loops: list[ToolTurnLoop]) -> None:
    scenario = storm({fault: 0.1 for fault in ALL_FAULTS})
    for result in checked_runs(scenario, kept_loops):
        faults = {row["fault"] for row in dict_rows(result.rows["requests"])} - {None}
        assert len(faults) >= 5, faults  # the storm did hit


def test_the_user_and_the_tools_misbehave_at_once(
    kept_loops: list[ToolTurnLoop],
) -> None:
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
    for result in checked_runs(scenario, kept_loops):
        outcomes = {row["outcome"] for row in dict_rows(result.rows["tools"])}
        assert {"success", "error", "permission_denied"} <= outcomes, outcomes


def bash_overlaps(safe_when: dict[str, str] | None, profile: str = "default") -> int:
    """Pairs of Bash calls of one turn that ran at the same time."""
    data = storm({}).model_dump(mode="python", exclude_unset=True)
    data["model"]["script"]["tool_mix"] = {"Bash": 1}
    data["model"]["faults"] = {}
    data["runtime"].pop("fallback_after_overloads")
    if safe_when is not None:
        data.setdefault("tools", {})["override"] = {"Bash": {"concurrency_safe_when": safe_when}}
    tools = dict_rows(run(Scenario.model_validate(data), profile=profile).rows["tools"])
    calls = [(t["session_id"], t["turn_index"], t["start_ns"], t["end_ns"]) for t in tools
             if t["start_ns"] is not None]
    return sum(
        1 for a, b in itertools.combinations(calls, 2)
        if a[:2] == b[:2] and a[2] < b[3] and b[2] < a[3]
    )


def test_read_only_bash_calls_run_side_by_side_when_the_scenario_or_profile_says_so() -> None:
    # The catalogue's Bash examples include `git status`, `ls -la /repo/src`, `git diff --stat`.
    assert bash_overlaps(None) == 0
    assert bash_overlaps({"field": "command", "matches": r"(ls|git (status|diff))(\s.*)?"}) > 0
    assert bash_overlaps(None, profile="claude-code") > 0


# ----- session-level faults (issue 22): crashes, rewinds, compaction -----

CAUSES = {"crash", "rewind", "compaction"}


class BodyCheckedLoop(ToolTurnLoop):
    """A loop whose every request body is checked as sent, apart from the loop's own verdict."""

    kept: ClassVar[list[ToolTurnLoop]] = []
    illegal: ClassVar[list[list[str]]] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        BodyCheckedLoop.kept.append(self)

    def _send(self, now_ns: int) -> SendRequest:
        send = super()._send(now_ns)
        violations = unexpected(self, check_pairing(send.request_body["messages"]))
        if violations:
            BodyCheckedLoop.illegal.append(violations)
        return send


@pytest.fixture
def checked_loops(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[ToolTurnLoop]]:
    BodyCheckedLoop.kept, BodyCheckedLoop.illegal = [], []
    monkeypatch.setattr(LoopFactory, "loop_class", BodyCheckedLoop)
    yield BodyCheckedLoop.kept


def session_storm(session: dict[str, Any], model_faults: float = 0.0) -> Scenario:
    data = storm({fault: model_faults for fault in ALL_FAULTS}).model_dump(mode="python")
    data["session"]["user_prompts"] = {"kind": "fixed", "n": 3}
    data["session"]["think_time"] = {"kind": "uniform", "low_ms": 500, "high_ms": 2000}
    data["session"] = {**data["session"], **session}
    return Scenario.model_validate(data)


def checked_fault_runs(
    scenario: Scenario, kept: list[ToolTurnLoop]
) -> Iterator[tuple[SimulationResult, str, str]]:
    """The scenario under each profile and policy: every session finished, every request sent
    legal (checked apart from the loop's verdict), every repair in the table with its cause and
    every repair the loops made in the table."""
    for profile, policy in itertools.product(PROFILES, ALL_POLICIES):
        kept.clear()
        result = run(scenario, policy, profile=profile)
        where = (policy, profile)
        assert result.sessions_finished == SESSIONS, where
        assert result.pairing_violations == 0 or own_duplicates(kept), where
        assert BodyCheckedLoop.illegal == [], where
        repairs = dict_rows(result.rows["repairs"])
        assert {row["cause"] for row in repairs} <= CAUSES, where
        assert len(repairs) == sum(len(loop.repairs) for loop in kept), where
        for loop in kept:
            assert unexpected(loop, check_pairing(loop.messages)) == [], where
        yield result, policy, profile


@pytest.mark.parametrize(
    "session",
    [
        {"faults": {"crash": 0.4}},
        {"faults": {"crash": 0.4}, "transcript": {
            "durability": "buffered",
            "write_delay": {"kind": "uniform", "low_ms": 1, "high_ms": 50},
        }},
        {"faults": {"rewind": 0.4}},
        {"compaction": {"trigger_tokens": 300, "cut": "naive"}},
    ],
    ids=["crash", "crash-buffered", "rewind", "naive-compaction"],
)
def test_each_session_fault_under_every_policy_and_profile(
    session: dict[str, Any], checked_loops: list[ToolTurnLoop]
) -> None:
    cause = "compaction" if "compaction" in session else next(iter(session["faults"]))
    buffered = "transcript" in session
    for result, policy, profile in checked_fault_runs(session_storm(session), checked_loops):
        causes = {row["cause"] for row in dict_rows(result.rows["repairs"])}
        lost = sum(row["n_calls_lost"] for row in dict_rows(result.rows["sessions"]))
        if buffered:
            # A buffer flushed at each turn's end holds whole turns: a crash loses the turn it
            # hits (its calls' work) rather than breaking the transcript.
            assert causes <= {cause} and lost > 0, (policy, profile, causes, lost)
        else:
            assert causes == {cause}, (policy, profile, causes)  # the fault broke transcripts


def test_session_faults_with_every_model_fault(checked_loops: list[ToolTurnLoop]) -> None:
    session = {
        "faults": {"crash": 0.2, "rewind": 0.1},
        "compaction": {"trigger_tokens": 400, "cut": "naive"},
        "interrupts": {"probability": 0.2},
    }
    for result, _, _ in checked_fault_runs(session_storm(session, 0.05), checked_loops):
        outcomes = {row["outcome"] for row in dict_rows(result.rows["turns"])}
        assert {"crash", "rewind"} <= outcomes


def test_a_turn_boundary_compaction_needs_no_repair(checked_loops: list[ToolTurnLoop]) -> None:
    session = {"compaction": {"trigger_tokens": 300, "cut": "turn_boundary"}}
    for result, _, _ in checked_fault_runs(session_storm(session), checked_loops):
        assert sum(row["n_compactions"] for row in dict_rows(result.rows["sessions"])) > 0
        assert dict_rows(result.rows["repairs"]) == []
