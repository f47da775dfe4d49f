"""Issue 31, section 2: calibrate learns concurrency safety from calls the log shows running at
once, also when their results came in call order: where the log times a call's run (Claude
Code's `toolUseResult.durationMs`, a sub-agent's `totalDurationMs`), a call that started before
a sibling's result, while the sibling started before its own, overlapped it."""

from __future__ import annotations

import tomllib
from pathlib import Path

from toolturn.traces.calibrate import calibrated_scenario, overlapped_tools
from toolturn.traces.sources import read_logs

OVERLAP = (Path(__file__).resolve().parents[1] / "fixtures" / "traces" / "claude-code-shapes"
           / "overlap_in_order.jsonl")


def test_the_logged_run_times_date_each_call_start() -> None:
    (session,) = read_logs([str(OVERLAP)]).sessions
    first, second = session.steps[0].tool_calls
    assert (first.run_ms, second.run_ms) == (3990.0, 4100.0)
    assert first.result_ms is not None and second.latest_start_ms is not None
    assert second.latest_start_ms < first.result_ms  # started before its sibling ended
    edit, glob = session.steps[1].tool_calls
    assert edit.run_ms is None and glob.run_ms == 30.0


def test_calls_overlapping_in_time_with_results_in_order_are_seen() -> None:
    # The Agents' results came in call order; only their run times show the overlap. The
    # Glob started (at the latest 6.120 s) after the Edit's result (6.100 s): no overlap.
    assert overlapped_tools(read_logs([str(OVERLAP)]).sessions) == {"Agent": 2}


def test_calibrate_makes_the_overlapping_tool_safe_and_the_serial_one_not() -> None:
    text = calibrated_scenario(read_logs([str(OVERLAP)]), "overlap", 1)
    tools = {t["name"]: t for t in tomllib.loads(text)["tools"]["define"]}
    assert tools["Agent"]["concurrency_safe"] is True
    assert tools["Edit"]["concurrency_safe"] is False
