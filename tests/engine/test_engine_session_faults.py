"""Session-level faults in the simulator (issue 22): crashes drawn inside parallel batches, strict
mode stopping a session rather than the run, the time from a crash to the resumed request, and
draws that leave every other stream where it was."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pyarrow as pa

from tests.helpers.engine_runs import default_scenario, dict_rows, run
from toolturn.engine.simulation import SimulationResult
from toolturn.metrics.session_faults import crash_waits_ns
from toolturn.scenario.schema import Scenario

SESSIONS = 12


def scenario(session: dict[str, Any], **runtime: Any) -> Scenario:
    data = default_scenario(SESSIONS).model_dump(mode="python", exclude_unset=True)
    data["load"]["concurrency"] = SESSIONS
    data["model"]["script"]["tool_calls"] = {"kind": "uniform", "low": 2, "high": 4}
    data["session"] = {
        **data.get("session", {}), "user_prompts": {"kind": "fixed", "n": 2}, **session
    }
    data["runtime"] = {**data.get("runtime", {}), **runtime}
    return Scenario.model_validate(data)


def partial_batches(result: SimulationResult) -> int:
    """Crashes after which some calls of the crashed turn's batch had their results on disk and
    some not: the resumed request's missing results are some, not all, of that turn's calls."""
    missing: dict[tuple[int, int], set[str]] = defaultdict(set)
    for row in dict_rows(result.rows["repairs"]):
        if row["cause"] == "crash" and row["kind"] == "missing_result_inserted":
            missing[row["session_id"], row["turn_index"] - 1].add(row["tool_use_id"])
    calls: dict[tuple[int, int], set[str]] = defaultdict(set)
    for row in dict_rows(result.rows["tools"]):
        if row["synthetic_cause"] not in ("discarded", "fallback"):
            calls[row["session_id"], row["turn_index"]].add(row["tool_use_id"])
    return sum(1 for key, ids in missing.items() if ids < calls[key])


def test_a_crash_inside_a_parallel_batch_is_one_of_the_drawn_cases() -> None:
    result = run(scenario({"faults": {"crash": 0.5}}))
    assert partial_batches(result) > 0
    crashed = [row for row in dict_rows(result.rows["turns"]) if row["outcome"] == "crash"]
    assert crashed
    # Running tools die with the process: they end at the crash, with a synthetic result.
    ends = {(row["session_id"], row["turn_index"]): row["turn_end_ns"] for row in crashed}
    died = [row for row in dict_rows(result.rows["tools"]) if row["synthetic_cause"] == "crash"]
    assert died and all(
        row["end_ns"] == ends[row["session_id"], row["turn_index"]] for row in died
    )
    assert sum(row["n_calls_lost"] for row in dict_rows(result.rows["sessions"])) >= len(
        [row for row in died if row["start_ns"] is not None]
    )


def test_the_resumed_request_comes_a_restart_delay_after_the_crash() -> None:
    fixed = {"kind": "fixed", "ms": 3000}
    result = run(scenario({"faults": {"crash": 0.5, "restart_delay": fixed}}))
    waits = crash_waits_ns(pa.Table.from_pylist(dict_rows(result.rows["turns"])))
    assert waits.size > 0
    assert set(waits.tolist()) == {3_000_000_000}


def test_strict_mode_stops_a_session_whose_resumed_transcript_broke_not_the_run() -> None:
    result = run(scenario({"faults": {"crash": 0.5}}, strict=True))
    assert result.sessions_finished == SESSIONS
    outcomes = [row["outcome"] for row in dict_rows(result.rows["sessions"])]
    assert "broken_transcript" in outcomes
    assert dict_rows(result.rows["repairs"]) == []  # strict mode repairs nothing
    assert result.pairing_violations == 0


def test_fault_draws_leave_every_other_stream_where_it_was() -> None:
    plain = run(scenario({}))
    # A log with a write delay, and a compaction that never triggers: the faults' machinery runs
    # (every line's delay is drawn) but nothing else may move.
    quiet = run(scenario({
        "transcript": {"write_delay": {"kind": "uniform", "low_ms": 1, "high_ms": 9}},
        "compaction": {"trigger_tokens": 10_000_000},
    }))
    for table in ("turns", "tools", "requests", "repairs", "sessions"):
        assert quiet.rows[table] == plain.rows[table], table


def test_same_seed_same_faults() -> None:
    faulty = scenario({"faults": {"crash": 0.3, "rewind": 0.2},
                       "compaction": {"trigger_tokens": 300, "cut": "naive"}})
    first, second = run(faulty), run(faulty)
    assert first.rows == second.rows
    assert dict_rows(first.rows["repairs"])
