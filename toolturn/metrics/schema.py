"""Explicit Arrow schemas of the run tables: one row per thing, long and tidy.

Rules every table follows:

- Times are integer nanoseconds of simulated time, absolute from the run's start (``*_ns``,
  ``int64``); durations (``latency_ns``, ``ttfts_ns``, ``start_lag_ns``) are differences of them.
- Categories (policy, outcome, kind, cause, model, ...) are dictionary-encoded strings.
- ``session_id`` is the index of the session within its simulation (one arm at one load
  level): sessions of the same ``session_id`` ran on the same random draws under every profile,
  every policy and at every level, so they pair. A session is named uniquely in the run by
  ``SESSION_KEY`` (``profile``, ``policy``, ``load_level``, ``session_id``); every table has these
  columns, so each row joins to exactly one ``sessions`` row on them (a load sweep's tables do not
  fan out).
- ``profile`` is the recovery profile a row ran under (``toolturn.runtime.recovery``), ``policy``
its
  executor policy: together, one arm of the run's comparison (``ARM_COLUMNS``).
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

from dataclasses import dataclass

import pyarrow as pa

CATEGORY = pa.dictionary(pa.int32(), pa.string())
NS = pa.int64()
COUNT = pa.int64()

# The `outcome` of a turn that counts towards throughput; other outcomes are free-form
# ("interrupted", "error", ...) and are counted in the summary by value.
COMPLETED = "completed"


def _field(name: str, type_: pa.DataType, *, nullable: bool = False) -> pa.Field:
    return pa.field(name, type_, nullable=nullable)


@dataclass(frozen=True)
class TableSpec:
    """A table's name, its Arrow schema and the columns its rows are sorted by first."""

    name: str
    schema: pa.Schema
    sort_key: tuple[str, ...]

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(self.schema.names)


# Where in the run a row was simulated: the position of its load level in the sweep (0 without a
# sweep) and that level's value. Every table has both, right after `profile`.
_POINT_FIELDS = (
    _field("load_level", pa.int64()),
    _field("load", pa.float64(), nullable=True),
)
# The columns naming the simulation a row belongs to (one unit of the run): rows of different
# units never coexisted. Grouping by them (the summary, the gate, the figures) never pools
# simulations; the paired differences compare arms (`ARM_COLUMNS`) within one point.
ARM_COLUMNS: tuple[str, ...] = ("profile", "policy")
POINT_COLUMNS: tuple[str, ...] = ("load_level", "load")
UNIT_COLUMNS: tuple[str, ...] = ARM_COLUMNS + POINT_COLUMNS
# The key of a session, unique in the run; every table's rows join to exactly one session on it.
SESSION_KEY: tuple[str, ...] = ("profile", "policy", "load_level", "session_id")


TURNS = TableSpec(
    "turns",
    pa.schema(
        [
            _field("run_id", CATEGORY),
            _field("scenario", CATEGORY),
            _field("seed", pa.int64()),
            _field("policy", CATEGORY),
            _field("profile", CATEGORY),
            *_POINT_FIELDS,
            _field("session_id", pa.int64()),
            _field("turn_index", pa.int64()),
            _field("model", CATEGORY, nullable=True),
            _field("request_sent_ns", NS),
            _field("first_event_ns", NS, nullable=True),
            _field("message_stop_ns", NS, nullable=True),
            _field("first_tool_start_ns", NS, nullable=True),
            _field("ttfts_ns", NS, nullable=True),
            _field("turn_end_ns", NS),
            _field("latency_ns", NS),
            _field("n_attempts", COUNT, nullable=True),
            _field("n_tool_calls", COUNT),
            _field("n_synthetic_results", COUNT),
            _field("n_repairs", COUNT),
            _field("input_tokens", COUNT, nullable=True),
            _field("output_tokens", COUNT, nullable=True),
            _field("stop_reason", CATEGORY, nullable=True),
            _field("outcome", CATEGORY),
        ]
    ),
    ("profile", "policy", "load_level", "session_id", "turn_index"),
)

TOOLS = TableSpec(
    "tools",
    pa.schema(
        [
            _field("run_id", CATEGORY),
            _field("policy", CATEGORY),
            _field("profile", CATEGORY),
            *_POINT_FIELDS,
            _field("session_id", pa.int64()),
            _field("turn_index", pa.int64()),
            _field("tool_use_id", pa.string()),
            _field("tool_name", CATEGORY),
            _field("block_stop_ns", NS),
            _field("queued_ns", NS, nullable=True),
            _field("start_ns", NS, nullable=True),
            _field("end_ns", NS, nullable=True),
            _field("start_lag_ns", NS, nullable=True),
            _field("outcome", CATEGORY),
            _field("synthetic_cause", CATEGORY, nullable=True),
        ]
    ),
    (
        "profile", "policy", "load_level", "session_id", "turn_index", "block_stop_ns",
        "tool_use_id",
    ),
)

REPAIRS = TableSpec(
    "repairs",
    pa.schema(
        [
            _field("run_id", CATEGORY),
            _field("policy", CATEGORY),
            _field("profile", CATEGORY),
            *_POINT_FIELDS,
            _field("session_id", pa.int64()),
            _field("turn_index", pa.int64()),
            _field("request_index", pa.int64()),
            _field("kind", CATEGORY),
            _field("tool_use_id", pa.string(), nullable=True),
            _field("cause", CATEGORY, nullable=True),
        ]
    ),
    ("profile", "policy", "load_level", "session_id", "turn_index", "request_index"),
)

REQUESTS = TableSpec(
    "requests",
    pa.schema(
        [
            _field("run_id", CATEGORY),
            _field("policy", CATEGORY),
            _field("profile", CATEGORY),
            *_POINT_FIELDS,
            _field("session_id", pa.int64()),
            _field("turn_index", pa.int64()),
            _field("request_index", pa.int64()),
            _field("attempt", pa.int64()),
            _field("model", CATEGORY),
            _field("status", CATEGORY),
            _field("retries", COUNT),
            _field("fault", CATEGORY, nullable=True),
            _field("sent_ns", NS),
            _field("first_event_ns", NS, nullable=True),
            _field("end_ns", NS),
            _field("input_tokens", COUNT),
            _field("output_tokens", COUNT),
            _field("n_events", COUNT),
        ]
    ),
    ("profile", "policy", "load_level", "session_id", "turn_index", "request_index", "attempt"),
)

SESSIONS = TableSpec(
    "sessions",
    pa.schema(
        [
            _field("run_id", CATEGORY),
            _field("policy", CATEGORY),
            _field("profile", CATEGORY),
            *_POINT_FIELDS,
            _field("session_id", pa.int64()),
            _field("arrival_ns", NS),
            _field("start_ns", NS, nullable=True),
            _field("end_ns", NS, nullable=True),
            _field("n_turns", COUNT),
            _field("outcome", CATEGORY),
            _field("n_interrupts", COUNT),
            _field("n_compactions", COUNT),
            _field("n_calls_lost", COUNT),
        ]
    ),
    ("profile", "policy", "load_level", "session_id"),
)

# The raw-event trace (`toolturn run --trace`): one row per stream event the runtime was fed, at its
# simulated arrival time. `request_index` is the loop's request number (as in `requests`),
# `event_index` the event's position in that request's stream (from 0); `block_index` is the
# event's "index" for content_block_* events, `delta_type` the delta's "type" for
# content_block_delta events (both null for every other event). Not one of `TABLES`: a run folder
# has it only when the trace was asked for, and the summary and comparisons never read it.
EVENTS = TableSpec(
    "events",
    pa.schema(
        [
            _field("run_id", CATEGORY),
            _field("policy", CATEGORY),
            _field("profile", CATEGORY),
            *_POINT_FIELDS,
            _field("session_id", pa.int64()),
            _field("turn_index", pa.int64()),
            _field("request_index", pa.int64()),
            _field("event_index", pa.int64()),
            _field("time_ns", NS),
            _field("type", CATEGORY),
            _field("block_index", pa.int64(), nullable=True),
            _field("delta_type", CATEGORY, nullable=True),
        ]
    ),
    (
        "profile", "policy", "load_level", "session_id", "turn_index", "request_index",
        "event_index",
    ),
)

# In the order they are written and reported: the tables every run folder has.
TABLES: tuple[TableSpec, ...] = (TURNS, TOOLS, REPAIRS, REQUESTS, SESSIONS)
# Tables a run folder has only when asked for (written after `TABLES`).
OPTIONAL_TABLES: tuple[TableSpec, ...] = (EVENTS,)

SUMMARY_SCHEMA = pa.schema(
    [
        _field("policy", CATEGORY),
        _field("profile", CATEGORY),
        # The baseline arm of a paired-difference row (value minus versus): a policy under the
        # row's profile (``paired.``), or a profile under the row's policy (``paired_profile.``);
        # null elsewhere.
        _field("versus", CATEGORY, nullable=True),
        _field("load_level", pa.int64()),
        _field("load", pa.float64(), nullable=True),
        _field("metric", pa.string()),
        _field("value", pa.float64()),
        _field("unit", CATEGORY),
        # True for measurements of the harness in wall-clock time: shown, never compared exactly.
        _field("wall_clock", pa.bool_()),
    ]
)

# The columns a run of more than one experiment point (toolturn.experiment.points) adds to every
# table: the point's position in the run, its replication and its key's text ("path=value;...").
EXPERIMENT_COLUMNS: tuple[str, ...] = ("point", "replication", "point_key")
# Its summary has them too, and every metric's confidence interval over the replications of a key
# (toolturn.metrics.intervals; null on the rows of one replication).
POINT_SUMMARY_SCHEMA = pa.schema(
    [
        *SUMMARY_SCHEMA,
        _field("point", pa.int32(), nullable=True),
        _field("replication", pa.int32(), nullable=True),
        _field("point_key", pa.string()),
        _field("ci_low", pa.float64(), nullable=True),
        _field("ci_high", pa.float64(), nullable=True),
    ]
)
