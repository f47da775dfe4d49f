"""The figures of `toolturn traces stats`: what the logged sessions did, as one JSON-ready object.

Definitions (the tests check them by hand on a small fixture):

- `requests`: model steps, failed ones included (`api_errors` counts those, and responses cut
  off after some of it was logged, `responses_cut`, each one request) and ones whose response
  the log does not hold (`requests_without_response`); `model_steps` the ones whose response it
  holds. `api_errors_by_kind`: the kind the log names (`connection_failed`), else the text's
  start. `meta_lines`: user lines the client wrote (Claude Code's `isMeta`: a resume after a
  cut, a caveat), history but no prompts. `tool_calls_unparsed_input`: calls whose input the
  client could not parse as JSON (`__unparsedToolInput`): the client's parse failure, not a run
  of the tool, so counted apart (by tool in `tool_calls_unparsed_input_by_tool`), not in
  `tool_calls`, `tool_calls_by_tool`, the tool's errors or durations (`tool_calls_per_step` and
  `parallel_share`, the model's behaviour, count them).
  `tool_errors_by_tool` leaves out the client's own cancellations of a failed shell call's
  siblings (`tool_results_sibling_cancelled` counts them).
  `tool_calls_per_step` is over model steps, those without calls
  included; `parallel_share` is the share of steps with calls that made two or more.
- Percentiles are numpy's default (linear interpolation between order statistics).
- `tool_duration_ms_by_tool`: tool_use timestamp to tool_result timestamp, per tool, over calls
  whose result was logged.
- `think_time_ms`: from the last logged response to one prompt to the next prompt.
- `output_tokens_per_response`: `usage.output_tokens` of each response that logs it.
- `first_block_delay_ms`: request sent (the log's own request line where it has one, Claude
  Code 2.1.332's `api-request`; else the line before the step) to the first content block's
  line; an upper bound on time to first token (Claude Code logs a block when it stops).
  `request_lines` counts those lines, `requests_timed_by_request_line` the requests they timed.
- `repairs_by_kind` and `repairs_per_1000_requests`: `toolturn.traces.boundary`, each request its
own
  count (a call left unanswered early in a session is repaired again in every later request).
  A `toolturn serve --record` folder keeps no request bodies: its requests add the server's own
  `pairing_violations` and count in `requests_without_history`, not in the repairs.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from toolturn.traces.boundary import BoundaryReport, boundary_report
from toolturn.traces.logged import LoggedSession
from toolturn.traces.sources import Logs


def distribution(values: list[float]) -> dict[str, Any]:
    """n, mean, p50, p90, p99 and max of `values` (all None but n when there are none)."""
    if not values:
        return {"n": 0, "mean": None, "p50": None, "p90": None, "p99": None, "max": None}
    array = np.asarray(values, dtype=float)
    p50, p90, p99 = (float(v) for v in np.percentile(array, [50, 90, 99]))
    return {
        "n": len(values),
        "mean": float(array.mean()),
        "p50": p50,
        "p90": p90,
        "p99": p99,
        "max": float(array.max()),
    }


def durations_by_tool(sessions: list[LoggedSession]) -> dict[str, list[float]]:
    durations: dict[str, list[float]] = {}
    for session in sessions:
        for call in session.tool_calls:
            if call.input_unparsed:
                continue  # the client's parse failure: no run of the tool
            duration = call.duration_ms
            if duration is not None:
                durations.setdefault(call.name, []).append(duration)
    return dict(sorted(durations.items()))


def _session_figures(sessions: list[LoggedSession]) -> dict[str, Any]:
    steps = [step for s in sessions for step in s.steps]
    answered = [step for step in steps if step.has_response]
    made = [call for step in answered for call in step.tool_calls]
    calls = [call for call in made if not call.input_unparsed]
    unparsed = [call for call in made if call.input_unparsed]
    per_step = [len(step.tool_calls) for step in answered]
    with_calls = [n for n in per_step if n > 0]
    # A failed request's error, and a cut response's: one per request.
    errors = [error for step in steps if (error := step.api_error or step.stream_error)]
    return {
        "sessions": len(sessions),
        "sidechain_sessions": sum(1 for s in sessions if s.sidechain),
        "prompts": sum(len(s.prompts_ms) for s in sessions),
        "requests": len(steps),
        "model_steps": len(answered),
        "tool_calls": len(calls),
        "tool_calls_by_tool": dict(sorted(Counter(call.name for call in calls).items())),
        "tool_errors_by_tool": dict(
            sorted(Counter(call.name for call in calls
                           if call.is_error and not call.sibling_cancelled).items())
        ),
        "tool_results_sibling_cancelled": sum(1 for call in calls if call.sibling_cancelled),
        "tool_calls_without_result": sum(1 for call in calls if call.result_ms is None),
        "tool_calls_per_step": distribution([float(n) for n in per_step]),
        "parallel_share": (
            sum(1 for n in with_calls if n >= 2) / len(with_calls) if with_calls else None
        ),
        "steps_per_session": distribution([float(len(s.steps)) for s in sessions]),
        "prompts_per_session": distribution([float(len(s.prompts_ms)) for s in sessions]),
        "think_time_ms": distribution([t for s in sessions for t in s.think_times_ms()]),
        "output_tokens_per_response": distribution(
            [float(s.output_tokens) for s in answered if s.output_tokens is not None]
        ),
        "requests_timed_by_request_line": sum(1 for s in steps if s.sent_logged),
        "first_block_delay_ms": distribution(
            [d for s in answered if (d := s.first_block_delay_ms) is not None]
        ),
        "requests_without_response": sum(
            1 for s in steps if s.api_error is None and not s.has_response
        ),
        "api_errors": len(errors),
        "api_errors_by_kind": dict(
            sorted(Counter(error.split(":", 1)[0] for error in errors).items())
        ),
        "responses_cut": sum(1 for s in steps if s.stream_error is not None),
        "meta_lines": sum(s.meta_lines for s in sessions),
        "tool_calls_unparsed_input": len(unparsed),
        "tool_calls_unparsed_input_by_tool": dict(
            sorted(Counter(call.name for call in unparsed).items())
        ),
    }


def _tool_durations(sessions: list[LoggedSession]) -> dict[str, dict[str, Any]]:
    return {
        name: {k: v for k, v in distribution(values).items() if k in ("n", "p50", "p90", "max")}
        for name, values in durations_by_tool(sessions).items()
    }


def _repairs(report: BoundaryReport) -> dict[str, Any]:
    return {
        "pairing_violations": report.violations,
        "requests_without_history": report.without_history,
        "repairs_by_kind": report.by_kind(),
        "repairs_per_1000_requests": report.per_1000_requests(),
        "repair_locations": [
            {
                "where": f.where,
                "session": f.session_id,
                "request_index": f.request_index,
                "kind": f.kind,
                "message_index": f.message_index,
                "tool_use_id": f.tool_use_id,
            }
            for f in report.findings
        ],
    }


def trace_stats(logs: Logs) -> dict[str, Any]:
    """Every figure of the logs, overall and per file, as a JSON-ready object."""
    figures: dict[str, Any] = {"files": len(logs.files)}
    figures.update(_session_figures(logs.sessions))
    figures["tool_duration_ms_by_tool"] = _tool_durations(logs.sessions)
    figures.update(_repairs(boundary_report(logs.sessions)))
    figures["skipped_lines"] = {
        "count": len(logs.skipped),
        "by_reason": logs.skipped.by_reason(),
        "lines": [str(line) for line in logs.skipped.lines],
    }
    figures["request_lines"] = logs.request_lines
    figures["other_lines_by_type"] = logs.other_lines
    figures["by_file"] = _by_file(logs)
    return figures


def _by_file(logs: Logs) -> list[dict[str, Any]]:
    """Counts per file, in one pass (a folder may hold thousands of session files)."""
    rows: dict[str, dict[str, Any]] = {
        file: {"file": file, "format": logs.formats[file], "sessions": 0, "requests": 0,
               "tool_calls": 0, "skipped_lines": 0}
        for file in logs.files
    }
    for session in logs.sessions:
        row = rows[session.source]
        row["sessions"] += 1
        row["requests"] += len(session.steps)
        row["tool_calls"] += sum(len(step.tool_calls) for step in session.steps)
    for line in logs.skipped.lines:
        # A recording's problems name its table file; its row is the recording's folder.
        owner = line.file if line.file in rows else str(Path(line.file).parent)
        rows[owner]["skipped_lines"] += 1
    return list(rows.values())
