"""Explicit Arrow schemas of the run tables: one row per thing, long and tidy.

Rules every table follows:

- Times are integer nanoseconds of simulated time, absolute from the run's start (``*_ns``,
  ``int64``); durations (``latency_ns``, ``ttfts_ns``, ``start_lag_ns``) are differences of them.
- Categories (policy, outcome, kind, cause, model, ...) are dictionary-encoded strings.
- ``session_id`` is the index of the session within its simulation (one arm at one load
  level): sessions of the same ``session_id`` ran on the same random draws under every profile,
  protocol, policy and at every level, so they pair. A session is named uniquely in the run by
  ``SESSION_KEY`` (``profile``, ``protocol``, ``policy``, ``load_level``, ``session_id``); every
  table has these columns, so each row joins to exactly one ``sessions`` row on them (a load
  sweep's tables do not fan out).
- ``profile`` is the recovery profile a row ran under (``toolturn.runtime.recovery``),
  ``protocol`` the wire protocol (``toolturn.runtime.protocol_timing``), ``policy`` its executor
  policy: together, one arm of the run's comparison (``ARM_COLUMNS``).
- A column is nullable only where the thing can be absent (``ttfts_ns`` of a turn without tools,
  ``start_ns`` of a tool cancelled before it started, ``fault`` of a request nothing was injected
  into); every other column must be filled for every row.
- ``load_level`` (``int64``) is the position of the row's load level in the scenario's sweep (0
  when it has one level), ``load`` (nullable ``float64``) that level's offered load (sessions at
  once for a closed loop, sessions arriving per second for an open one; null for a trace of
  arrivals). Every table has both; the summary, the gate and the figures are per level.

Each table also names its *sort key*: rows are written sorted by the key, then by every other
column, so the same rows always give the same file whatever order they were collected in.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pyarrow as pa

from toolturn.metrics.column_spec import Column, column

CATEGORY = pa.dictionary(pa.int32(), pa.string())
NS = pa.int64()
COUNT = pa.int64()

# The `outcome` of a turn that counts towards throughput; other outcomes are free-form
# ("interrupted", "error", ...) and are counted in the summary by value.
COMPLETED = "completed"


@dataclass(frozen=True)
class TableSpec:
    """A table's name, its Arrow schema and the columns its rows are sorted by first; with the
    specification of each column (`toolturn.metrics.column_spec.Column`) when it was made from
    them (`table_spec`)."""

    name: str
    schema: pa.Schema
    sort_key: tuple[str, ...]
    columns: tuple[Column, ...] = ()

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(self.schema.names)


def table_spec(name: str, columns: Iterable[Column], sort_key: tuple[str, ...]) -> TableSpec:
    """A table made from its columns' specifications: its schema is their fields, in order."""
    columns = tuple(columns)
    return TableSpec(name, pa.schema([c.field for c in columns]), sort_key, columns)


# The columns most tables share, specified once.
RUN_ID = column("run_id", CATEGORY, "the run folder's name")
SCENARIO = column("scenario", CATEGORY, "the scenario's name")
SEED = column(
    "seed", pa.int64(),
    "the run's root seed (in a run of experiment points: the point's own seed)",
)
POLICY = column("policy", CATEGORY, "executor policy: streaming, at_message_stop or serial")
PROFILE = column(
    "profile", CATEGORY,
    "recovery profile of the loop (toolturn.runtime.recovery): default, claude-code or codex",
)
PROTOCOL = column(
    "protocol", CATEGORY,
    "wire protocol the row's turns were spoken in (toolturn.runtime.protocol_timing): anthropic, "
    "openai-responses or openai-chat",
)
LOAD_LEVEL = column(
    "load_level", pa.int64(),
    "position of the row's load level in the scenario's sweep, from 0 (0 without a sweep)",
)
LOAD = column(
    "load", pa.float64(),
    "offered load of the level: sessions at once (closed loop) or arriving per second (open loop); "
    "null for a trace of arrivals",
    nullable=True,
)
SESSION_ID = column(
    "session_id", pa.int64(),
    "the session's number within its simulation; the same number is the same simulated user under "
    "every profile, protocol, policy and level (key: profile, protocol, policy, load_level, "
    "session_id)",
)
TURN_INDEX = column("turn_index", pa.int64(), "the turn's number within its session, from 1")
REQUEST_INDEX = column(
    "request_index", pa.int64(),
    "the loop's request number within the session, from 1",
)
# Turns and requests both time their first stream event.
FIRST_EVENT_NS = column(
    "first_event_ns", NS, "first stream event received, from the run's start", nullable=True
)

# Where in the run a row was simulated: the position of its load level in the sweep (0 without a
# sweep) and that level's value. Every table has both, right after `profile`.
LEVEL_COLUMNS = (LOAD_LEVEL, LOAD)
# What every table but `turns` (which has the scenario and the seed after the run) begins with:
# the run, the arm, the level and the session.
SESSION_COLUMNS = (RUN_ID, POLICY, PROFILE, PROTOCOL, *LEVEL_COLUMNS, SESSION_ID)

# The columns naming the simulation a row belongs to (one unit of the run): rows of different
# units never coexisted. Grouping by them (the summary, the gate, the figures) never pools
# simulations; the paired differences compare arms (`ARM_COLUMNS`) within one point.
ARM_COLUMNS: tuple[str, ...] = ("profile", "protocol", "policy")
POINT_COLUMNS: tuple[str, ...] = ("load_level", "load")
UNIT_COLUMNS: tuple[str, ...] = ARM_COLUMNS + POINT_COLUMNS
# The key of a session, unique in the run; every table's rows join to exactly one session on it.
SESSION_KEY: tuple[str, ...] = ("profile", "protocol", "policy", "load_level", "session_id")


TURNS = table_spec(
    "turns",
    [
        RUN_ID,
        SCENARIO,
        SEED,
        POLICY,
        PROFILE,
        PROTOCOL,
        *LEVEL_COLUMNS,
        SESSION_ID,
        TURN_INDEX,
        column(
            "model", CATEGORY,
            "model name the request went to (the fallback model after a fallback)",
            nullable=True,
        ),
        column("request_sent_ns", NS, "the turn's first request sent, from the run's start"),
        FIRST_EVENT_NS,
        column(
            "message_stop_ns", NS,
            "the last attempt's message_stop, from the run's start",
            nullable=True,
        ),
        column(
            "first_tool_start_ns", NS,
            "first start of a tool whose result the turn keeps",
            nullable=True,
        ),
        column(
            "ttfts_ns", NS,
            "time to first tool start: first_tool_start_ns - request_sent_ns; null for a turn "
            "without such a tool",
            nullable=True,
        ),
        column("turn_end_ns", NS, "tool results ready, or the final answer, or the horizon"),
        column("latency_ns", NS, "turn latency: turn_end_ns - request_sent_ns"),
        column(
            "n_attempts", COUNT,
            "requests sent for the turn (retries and fallbacks included)",
            nullable=True,
        ),
        column("n_tool_calls", COUNT, "tool_use blocks of the turn's kept response"),
        column(
            "n_synthetic_results", COUNT,
            "tool results made by the loop or executor, not a tool",
        ),
        column("n_repairs", COUNT, "changes the API-boundary repair made for the turn's requests"),
        column(
            "misfires", COUNT,
            "speculative starts of the turn's calls whose arguments then changed (openai-chat "
            "under chat_start = at_parsed_json; 0 elsewhere)",
            unit="count",
        ),
        column(
            "input_tokens", COUNT,
            "input tokens summed over the turn's attempts",
            nullable=True,
        ),
        column(
            "output_tokens", COUNT,
            "output tokens summed over the turn's attempts",
            nullable=True,
        ),
        column(
            "stop_reason", CATEGORY,
            "the API's stop reason, or the loop's ending",
            nullable=True,
        ),
        column(
            "outcome", CATEGORY,
            "completed, interrupted, stream_error, request_failed or horizon",
        ),
    ],
    ("profile", "protocol", "policy", "load_level", "session_id", "turn_index"),
)

TOOLS = table_spec(
    "tools",
    [
        *SESSION_COLUMNS,
        TURN_INDEX,
        column("tool_use_id", pa.string(), "the tool_use block's id"),
        column("tool_name", CATEGORY, "the tool called"),
        column("block_stop_ns", NS, "its tool_use block's content_block_stop arrived"),
        column("queued_ns", NS, "handed to the executor; null if never", nullable=True),
        column(
            "start_ns", NS,
            "started, from the run's start; null if it never started",
            nullable=True,
        ),
        column("end_ns", NS, "its result ready; null if it never ended", nullable=True),
        column(
            "start_lag_ns", NS,
            "start_ns - block_stop_ns; null if it never started",
            nullable=True,
        ),
        column("outcome", CATEGORY, "success, error, cancelled (or pending at the horizon)"),
        column(
            "synthetic_cause", CATEGORY,
            "why the loop or executor made its result (user_interrupt, stream_error, "
            "sibling_error, discarded, fallback, misfire, ...); null for a tool's own result",
            nullable=True,
        ),
        column(
            "misfired", pa.bool_(),
            "its speculative start misfired (openai-chat under chat_start = at_parsed_json: its "
            "arguments changed after they parsed), so it was started again when complete",
        ),
    ],
    (
        "profile", "protocol", "policy", "load_level", "session_id", "turn_index", "block_stop_ns",
        "tool_use_id",
    ),
)

REPAIRS = table_spec(
    "repairs",
    [
        *SESSION_COLUMNS,
        TURN_INDEX,
        REQUEST_INDEX,
        column(
            "kind", CATEGORY,
            "what the API-boundary repair changed (missing_result, orphan_removed, duplicate_id, "
            "...)",
        ),
        column(
            "tool_use_id", pa.string(),
            "the tool id the change concerned, if any",
            nullable=True,
        ),
        column(
            "cause", CATEGORY,
            "what broke the transcript the request carried: crash, rewind or compaction (the "
            "resume before the request); null otherwise",
            nullable=True,
        ),
    ],
    ("profile", "protocol", "policy", "load_level", "session_id", "turn_index", "request_index"),
)

REQUESTS = table_spec(
    "requests",
    [
        *SESSION_COLUMNS,
        TURN_INDEX,
        REQUEST_INDEX,
        column("attempt", pa.int64(), "attempt number of the request, from 1"),
        column(
            "model", CATEGORY,
            "model name the request went to (the fallback model after a fallback)",
        ),
        column("status", CATEGORY, "HTTP status (200, 429, 529, ...) or pending/cancelled"),
        column("retries", COUNT, "attempt - 1"),
        column("fault", CATEGORY, "the fault injected into it, if any", nullable=True),
        column("sent_ns", NS, "sent, from the run's start"),
        FIRST_EVENT_NS,
        column("end_ns", NS, "its stream ended (or the horizon)"),
        column(
            "input_tokens", COUNT,
            "input tokens the API reported (0 if the stream never began)",
        ),
        column("output_tokens", COUNT, "output tokens the API reported (0 if none)"),
        column("n_events", COUNT, "stream events received"),
    ],
    (
        "profile", "protocol", "policy", "load_level", "session_id", "turn_index", "request_index",
        "attempt",
    ),
)

SESSIONS = table_spec(
    "sessions",
    [
        *SESSION_COLUMNS,
        column("arrival_ns", NS, "due (scheduled arrival), from the run's start"),
        column("start_ns", NS, "started, from the run's start", nullable=True),
        column("end_ns", NS, "ended; null if the horizon came first", nullable=True),
        column("n_turns", COUNT, "turns the session ran"),
        column(
            "outcome", CATEGORY,
            "completed, horizon, or broken_transcript (strict mode stopped it when a resumed "
            "transcript broke the pairing rules); an agent arm's also interrupted or agent_error "
            "(toolturn run --agent)",
        ),
        column("n_interrupts", COUNT, "user interrupts in the session"),
        column("n_compactions", COUNT, "compactions of the session's transcript"),
        column(
            "n_calls_lost", COUNT,
            "tool calls started before a crash whose results never reached the persisted "
            "transcript",
        ),
        column(
            "error_type", CATEGORY,
            "the exception's type that ended an agent_error session (toolturn run --agent); null "
            "for every other session",
            nullable=True,
        ),
        column(
            "error_message", pa.string(),
            "the exception's message that ended an agent_error session, as it was; null for "
            "every other session",
            nullable=True,
        ),
    ],
    ("profile", "protocol", "policy", "load_level", "session_id"),
)

# The raw-event trace (`toolturn run --trace`): one row per stream event the runtime was fed, at its
# simulated arrival time. `request_index` is the loop's request number (as in `requests`),
# `event_index` the event's position in that request's stream (from 0); `block_index` is the
# event's "index" for content_block_* events, `delta_type` the delta's "type" for
# content_block_delta events (both null for every other event). Not one of `TABLES`: a run folder
# has it only when the trace was asked for, and the summary and comparisons never read it.
EVENTS = table_spec(
    "events",
    [
        *SESSION_COLUMNS,
        TURN_INDEX,
        REQUEST_INDEX,
        column("event_index", pa.int64(), "the event's position in its request's stream, from 0"),
        column("time_ns", NS, "simulated arrival, from the run's start"),
        column("type", CATEGORY, "the stream event's type"),
        column(
            "block_index", pa.int64(),
            "the content block's index (content_block_* events)",
            nullable=True,
        ),
        column(
            "delta_type", CATEGORY,
            "the delta's type (content_block_delta events)",
            nullable=True,
        ),
    ],
    (
        "profile", "protocol", "policy", "load_level", "session_id", "turn_index", "request_index",
        "event_index",
    ),
)

# In the order they are written and reported: the tables every run folder has.
TABLES: tuple[TableSpec, ...] = (TURNS, TOOLS, REPAIRS, REQUESTS, SESSIONS)
# Tables a run folder has only when asked for (written after `TABLES`).
OPTIONAL_TABLES: tuple[TableSpec, ...] = (EVENTS,)

# The summary's columns (`toolturn.metrics.summary`): a row per metric of a simulation, or per
# paired difference between two arms of it.
SUMMARY_COLUMNS: tuple[Column, ...] = (
    POLICY,
    PROFILE,
    column(
        "protocol", CATEGORY,
        "wire protocol of the rows summarised: anthropic, openai-responses or openai-chat (every "
        "row of the summary is within one protocol)",
    ),
    column(
        "versus", CATEGORY,
        "for a paired row: the baseline policy (paired.*: value = policy minus versus, per turn, "
        "within the profile) or the baseline profile (paired_profile.*: profile minus versus, "
        "within the policy); null elsewhere",
        nullable=True,
    ),
    *LEVEL_COLUMNS,
    column("metric", pa.string(), "the metric's name (see toolturn.metrics.summary)"),
    column("value", pa.float64(), "its value, in unit"),
    column("unit", CATEGORY, "the value's unit (ns, turns, per 1k requests, share, ...)"),
    column(
        "wall_clock", pa.bool_(),
        "true for measurements of the harness in wall-clock time (never gated)",
    ),
)
SUMMARY_SCHEMA = pa.schema([c.field for c in SUMMARY_COLUMNS])

# The columns a run of more than one experiment point (toolturn.experiment.points) adds to every
# table: the point's position in the run, its replication and its key's text ("path=value;...").
POINT_KEY = column(
    "point_key", pa.string(),
    "the point's settings: path=value joined by ';' in key order, values as JSON",
)
POINT_COLUMN_SPECS: tuple[Column, ...] = (
    column(
        "point", pa.int32(),
        "the experiment point's index in the run (toolturn.experiment.points; only in a run of "
        "several points)",
    ),
    column(
        "replication", pa.int32(),
        "which replication (seed) of its point the row's simulation is, from 0",
    ),
    POINT_KEY,
)
EXPERIMENT_COLUMNS: tuple[str, ...] = tuple(c.name for c in POINT_COLUMN_SPECS)
# Its summary has them too, and every metric's confidence interval over the replications of a key
# (toolturn.metrics.intervals; null on the rows of one replication).
POINT_SUMMARY_COLUMNS: tuple[Column, ...] = (
    *SUMMARY_COLUMNS,
    column(
        "point", pa.int32(),
        "the experiment point summarised; null for a row over a key's replications",
        nullable=True,
    ),
    column(
        "replication", pa.int32(),
        "the point's replication; null for a row over a key's replications",
        nullable=True,
    ),
    POINT_KEY,
    column(
        "ci_low", pa.float64(),
        "over a key's replications: the 95% t interval's low end (null from one replication)",
        nullable=True,
    ),
    column(
        "ci_high", pa.float64(),
        "over a key's replications: the 95% t interval's high end",
        nullable=True,
    ),
)
POINT_SUMMARY_SCHEMA = pa.schema([c.field for c in POINT_SUMMARY_COLUMNS])
