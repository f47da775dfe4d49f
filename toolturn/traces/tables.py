"""`toolturn traces stats --out DIR`: the logs as Parquet tables, one row per thing.

- `steps`: one row per request (file, where, session, step index, prompt index, tool calls,
  stop reason, output tokens, first block delay, API error);
- `tool_calls`: one row per tool_use (tool, duration in ms where the result was logged, error);
- `repairs`: one row per repair the boundary would make (`toolturn.traces.boundary`);
- `skipped`: one row per skipped line (file, line, reason).

The folder is written atomically (`toolturn.metrics.atomic`): a failure leaves no half folder.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from toolturn.metrics.atomic import atomic_directory
from toolturn.traces.boundary import boundary_report
from toolturn.traces.sources import Logs

STEPS = pa.schema(
    [
        ("file", pa.string()),
        ("where", pa.string()),
        ("session_id", pa.string()),
        ("sidechain", pa.bool_()),
        ("step_index", pa.int64()),
        ("prompt_index", pa.int64()),
        ("n_tool_calls", pa.int64()),
        ("stop_reason", pa.string()),
        ("output_tokens", pa.int64()),
        ("first_block_delay_ms", pa.float64()),
        ("api_error", pa.string()),
    ]
)
TOOL_CALLS = pa.schema(
    [
        ("where", pa.string()),
        ("session_id", pa.string()),
        ("step_index", pa.int64()),
        ("tool_use_id", pa.string()),
        ("tool_name", pa.string()),
        ("duration_ms", pa.float64()),
        ("has_result", pa.bool_()),
        ("is_error", pa.bool_()),
    ]
)
REPAIRS = pa.schema(
    [
        ("where", pa.string()),
        ("session_id", pa.string()),
        ("request_index", pa.int64()),
        ("kind", pa.string()),
        ("message_index", pa.int64()),
        ("tool_use_id", pa.string()),
    ]
)
SKIPPED = pa.schema([("file", pa.string()), ("line", pa.int64()), ("reason", pa.string())])


def trace_tables(logs: Logs) -> dict[str, pa.Table]:
    steps: list[dict[str, object]] = []
    calls: list[dict[str, object]] = []
    for session in logs.sessions:
        for index, step in enumerate(session.steps):
            steps.append(
                {
                    "file": session.source, "where": step.where,
                    "session_id": session.session_id, "sidechain": session.sidechain,
                    "step_index": index, "prompt_index": step.prompt_index,
                    "n_tool_calls": len(step.tool_calls), "stop_reason": step.stop_reason,
                    "output_tokens": step.output_tokens,
                    "first_block_delay_ms": step.first_block_delay_ms,
                    "api_error": step.api_error,
                }
            )
            calls.extend(
                {
                    "where": call.where, "session_id": session.session_id,
                    "step_index": index, "tool_use_id": call.tool_use_id,
                    "tool_name": call.name, "duration_ms": call.duration_ms,
                    "has_result": call.result_ms is not None or call.result_text is not None,
                    "is_error": call.is_error,
                }
                for call in step.tool_calls
            )
    repairs = [
        {
            "where": f.where, "session_id": f.session_id, "request_index": f.request_index,
            "kind": f.kind, "message_index": f.message_index, "tool_use_id": f.tool_use_id,
        }
        for f in boundary_report(logs.sessions).findings
    ]
    skipped = [{"file": s.file, "line": s.line, "reason": s.reason} for s in logs.skipped.lines]
    return {
        "steps": pa.Table.from_pylist(steps, schema=STEPS),
        "tool_calls": pa.Table.from_pylist(calls, schema=TOOL_CALLS),
        "repairs": pa.Table.from_pylist(repairs, schema=REPAIRS),
        "skipped": pa.Table.from_pylist(skipped, schema=SKIPPED),
    }


def write_tables(logs: Logs, destination: Path, *, replace: bool) -> list[Path]:
    tables = trace_tables(logs)
    with atomic_directory(destination, replace=replace) as staging:
        for name, table in tables.items():
            pq.write_table(table, staging / f"{name}.parquet")
    return [destination / f"{name}.parquet" for name in tables]
