"""What every column of the run tables means, and its unit: written into each Parquet file as
the field's key-value metadata (``description``, ``unit``), printed by `toolturn schema`.

Durations and times stay ``int64`` nanoseconds (exact, and what pandas, polars and DuckDB all
read as plain integers); the ``unit`` metadata says so on every such column (rule 1 of
``toolturn.metrics.schema``), so a reader need not guess from the ``_ns`` suffix.
"""

from __future__ import annotations

import pyarrow as pa

from toolturn.metrics.schema import OPTIONAL_TABLES, SUMMARY_SCHEMA, TABLES, TableSpec

SUMMARY = "summary"
# By column name; `BY_TABLE` overrides where a name means something else in one table.
COMMON: dict[str, str] = {
    "run_id": "the run folder's name",
    "scenario": "the scenario's name",
    "seed": "the run's root seed (in a run of experiment points: the point's own seed)",
    "point": "the experiment point's index in the run (toolturn.experiment.points; only in a run "
    "of "
    "several points)",
    "replication": "which replication (seed) of its point the row's simulation is, from 0",
    "point_key": "the point's settings: path=value joined by ';' in key order, values as JSON",
    "policy": "executor policy: streaming, at_message_stop or serial",
    "profile": "recovery profile of the loop (toolturn.runtime.recovery): default, claude-code "
    "or codex",
    "load_level": "position of the row's load level in the scenario's sweep, from 0 (0 without "
    "a sweep)",
    "load": "offered load of the level: sessions at once (closed loop) or arriving per second "
    "(open loop); null for a trace of arrivals",
    "session_id": "the session's number within its simulation; the same number is the same "
    "simulated user under every profile, policy and level (key: profile, policy, load_level, "
    "session_id)",
    "turn_index": "the turn's number within its session, from 0",
    "request_index": "the loop's request number within the session, from 1",
    "model": "model name the request went to (the fallback model after a fallback)",
    "first_event_ns": "first stream event received, from the run's start",
    "input_tokens": "input tokens the API reported (message_start)",
    "output_tokens": "output tokens the API reported (message_delta)",
    "outcome": "how it ended",
    "tool_use_id": "the tool_use block's id",
    "start_ns": "started, from the run's start; null if it never started",
    "end_ns": "ended, from the run's start",
}
BY_TABLE: dict[tuple[str, str], str] = {
    ("turns", "request_sent_ns"): "the turn's first request sent, from the run's start",
    ("turns", "message_stop_ns"): "the last attempt's message_stop, from the run's start",
    ("turns", "first_tool_start_ns"): "first start of a tool whose result the turn keeps",
    ("turns", "ttfts_ns"): "time to first tool start: first_tool_start_ns - request_sent_ns; "
    "null for a turn without such a tool",
    ("turns", "turn_end_ns"): "tool results ready, or the final answer, or the horizon",
    ("turns", "latency_ns"): "turn latency: turn_end_ns - request_sent_ns",
    ("turns", "n_attempts"): "requests sent for the turn (retries and fallbacks included)",
    ("turns", "n_tool_calls"): "tool_use blocks of the turn's kept response",
    ("turns", "n_synthetic_results"): "tool results made by the loop or executor, not a tool",
    ("turns", "n_repairs"): "changes the API-boundary repair made for the turn's requests",
    ("turns", "input_tokens"): "input tokens summed over the turn's attempts",
    ("turns", "output_tokens"): "output tokens summed over the turn's attempts",
    ("turns", "stop_reason"): "the API's stop reason, or the loop's ending",
    ("turns", "outcome"): "completed, interrupted, stream_error, request_failed or horizon",
    ("tools", "tool_name"): "the tool called",
    ("tools", "block_stop_ns"): "its tool_use block's content_block_stop arrived",
    ("tools", "queued_ns"): "handed to the executor; null if never",
    ("tools", "end_ns"): "its result ready; null if it never ended",
    ("tools", "start_lag_ns"): "start_ns - block_stop_ns; null if it never started",
    ("tools", "outcome"): "success, error, cancelled (or pending at the horizon)",
    ("tools", "synthetic_cause"): "why the loop or executor made its result (user_interrupt, "
    "stream_error, sibling_error, discarded, fallback, ...); null for a tool's own result",
    ("repairs", "kind"): "what the API-boundary repair changed (missing_result, orphan_removed, "
    "duplicate_id, ...)",
    ("repairs", "tool_use_id"): "the tool id the change concerned, if any",
    ("repairs", "cause"): "what broke the transcript the request carried: crash, rewind or "
    "compaction (the resume before the request); null otherwise",
    ("requests", "attempt"): "attempt number of the request, from 1",
    ("requests", "status"): "HTTP status (200, 429, 529, ...) or pending/cancelled",
    ("requests", "retries"): "attempt - 1",
    ("requests", "fault"): "the fault injected into it, if any",
    ("requests", "sent_ns"): "sent, from the run's start",
    ("requests", "end_ns"): "its stream ended (or the horizon)",
    ("requests", "n_events"): "stream events received",
    ("requests", "input_tokens"): "input tokens the API reported (0 if the stream never began)",
    ("requests", "output_tokens"): "output tokens the API reported (0 if none)",
    ("sessions", "arrival_ns"): "due (scheduled arrival), from the run's start",
    ("sessions", "start_ns"): "started, from the run's start",
    ("sessions", "end_ns"): "ended; null if the horizon came first",
    ("sessions", "n_turns"): "turns the session ran",
    ("sessions", "outcome"): "completed, horizon, or broken_transcript (strict mode stopped it "
    "when a resumed transcript broke the pairing rules)",
    ("sessions", "n_interrupts"): "user interrupts in the session",
    ("sessions", "n_compactions"): "compactions of the session's transcript",
    ("sessions", "n_calls_lost"): "tool calls started before a crash whose results never "
    "reached the persisted transcript",
    ("events", "event_index"): "the event's position in its request's stream, from 0",
    ("events", "time_ns"): "simulated arrival, from the run's start",
    ("events", "type"): "the stream event's type",
    ("events", "block_index"): "the content block's index (content_block_* events)",
    ("events", "delta_type"): "the delta's type (content_block_delta events)",
    (SUMMARY, "versus"): "for a paired row: the baseline policy (paired.*: value = policy minus "
    "versus, per turn, within the profile) or the baseline profile (paired_profile.*: profile "
    "minus versus, within the policy); null elsewhere",
    (SUMMARY, "metric"): "the metric's name (see toolturn.metrics.summary)",
    (SUMMARY, "value"): "its value, in unit",
    (SUMMARY, "unit"): "the value's unit (ns, turns, per 1k requests, share, ...)",
    (SUMMARY, "wall_clock"): "true for measurements of the harness in wall-clock time (never "
    "gated)",
    (SUMMARY, "point"): "the experiment point summarised; null for a row over a key's "
    "replications",
    (SUMMARY, "replication"): "the point's replication; null for a row over a key's replications",
    (SUMMARY, "ci_low"): "over a key's replications: the 95% t interval's low end (null from "
    "one replication)",
    (SUMMARY, "ci_high"): "over a key's replications: the 95% t interval's high end",
}
UNITS: dict[str, str] = {
    "input_tokens": "tokens",
    "output_tokens": "tokens",
    "load": "sessions, or sessions/s",
}


def describe(table: str, column: str) -> tuple[str, str]:
    """The (description, unit) of a column of `table` ('' for a unitless column)."""
    description = BY_TABLE.get((table, column)) or COMMON.get(column, "")
    if not description:
        raise KeyError(f"{table}.{column}: no description (add it to toolturn.metrics.columns)")
    unit = "ns" if column.endswith("_ns") else UNITS.get(column, "")
    if column.startswith("n_") or column in ("retries",):
        unit = "count"
    return description, unit


def described_schema(name: str, schema: pa.Schema) -> pa.Schema:
    """`schema` with each field's ``description`` and ``unit`` as its metadata."""
    fields = []
    for field in schema:
        description, unit = describe(name, field.name)
        metadata = {b"description": description.encode()}
        if unit:
            metadata[b"unit"] = unit.encode()
        fields.append(field.with_metadata(metadata))
    return pa.schema(fields, metadata=schema.metadata)


def all_specs() -> list[TableSpec]:
    """Every table `toolturn schema` describes: the run tables, the trace and the summary."""
    return [*TABLES, *OPTIONAL_TABLES, TableSpec(SUMMARY, SUMMARY_SCHEMA, ())]

