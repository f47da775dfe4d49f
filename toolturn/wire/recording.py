"""What a client did against `toolturn serve`, as three tables (`toolturn serve --record DIR`).

Times are integer nanoseconds of the server's monotonic clock from the recording's start. A
session id is the server's (`toolturn.wire.identity`), a 64-bit unsigned number.

- `requests`: one row per request that reached the Messages endpoint: its arrival, identity,
  model, the status line sent (null: none went out) and how the answer ended, the faults
  injected, its message count, the pairing violations we found (our 400s), whether its bytes
  repeat an earlier request of the same session and turn (a retry), the time since the
  session's previous response ended, when the answer's first body byte was written and its
  time to first byte from the arrival, the body bytes written, and the wire protocol it came
  in (`protocol`: `anthropic`, `openai-responses` or `openai-chat`, the names of
  `toolturn.wire.codecs`; a refused body is named by the endpoint it was posted to).
- `tool_calls`: one row per tool_use block written to the socket, whatever the answer's ending
  (a stream aborted after an `event: error` keeps the calls it sent): its position among the
  response's content blocks, whether another block of the response has the same id, its block
  stop and message stop times as written (null if the stream never got there), the first later
  request of the session carrying a tool_result for it, that result's `is_error`, its position
  among that message's results, whether the results came in tool_use order, and the round trip
  from block stop to that request's arrival. A result is matched to a block, not to an id: to
  the block the client kept in the assistant message it sent before the result (by id, then
  name and input), so of two blocks with one id the row of the one the client answered has the
  result.
- `recoveries`: one row per request a fault was injected into: what the session's next request
  did about what the answer wrote (`RECOVERY_CLASSES`, decided by
  `toolturn.wire.next_step.next_step`, the probe's classifier too), after what delay.

Each column's type, unit and meaning are specified once (`toolturn.metrics.column_spec.Column`):
the files carry them as field metadata, `toolturn schema recording.requests` (and
`recording.tool_calls`, `recording.recoveries`) prints them, and docs/reference/tables.md lists
them. Turns count from 1 (`turn_index`), as in every table.

A recovery stays pending until the session's next request (one that arrives while the faulted
answer is still being written, a client leaving a stall, is that next request); one with none
within `give_up_ns` of its response's end (or at the end of the recording) is `stopped`. A
session with no request for `give_up_ns` (and none in flight) is over: its calls still awaiting
results are written without one, and a later request of it is compared with nothing before it
(no retry, no time since a previous response). Times of writes are taken as each write returns
(the socket took the bytes); a Message answered whole (`stream: false`) has its blocks stop as
its body goes. The columns in `ADDED_COLUMNS` are null in a recording made before they existed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from toolturn.metrics.column_spec import Column, column
from toolturn.metrics.schema import CATEGORY, COUNT, NS, TableSpec, table_spec
from toolturn.wire.next_step import CLASSES, Asked, WrittenCall

SESSION = pa.uint64()
# The tables' names as `toolturn schema` and the column reference know them: the run folder has
# a `requests` table of its own.
PREFIX = "recording."
# The classes of `toolturn.wire.next_step`, shared with the probe's scorecard: one vocabulary.
RECOVERY_CLASSES = CLASSES


def recording_table(name: str, columns: list[Column], sort_key: tuple[str, ...]) -> TableSpec:
    """A recording table from its columns' specifications; its schema's fields carry each
    column's description and unit as metadata, so every file written from it does."""
    spec = table_spec(name, columns, sort_key)
    fields = [c.field.with_metadata(c.metadata) for c in spec.columns]
    return TableSpec(spec.name, pa.schema(fields), spec.sort_key, spec.columns)


def _session(description: str, nullable: bool = False) -> Column:
    return column("session_id", SESSION, description, nullable=nullable)


_REQUEST_INDEX = column("request_index", COUNT, "the request's number in the recording, from 0, "
                        "in order of arrival")
_TURN = "the turn's number within its session, from 1 (`x-sim-turn`, or the request's assistant "
_TURN += "messages plus 1)"
_ATTEMPT = "the attempt at the turn, from 1 (a retry of the same turn: 2, ...)"
_SENT_SESSION = "the session of the request that sent it (`toolturn.wire.identity`)"

REQUESTS = recording_table("requests", [
    _REQUEST_INDEX,
    column("arrival_ns", NS, "when the request arrived, from the recording's start"),
    _session("the server's session id of the request (`toolturn.wire.identity`: `x-sim-session`, "
             "or a hash of the conversation); null: refused before the model saw it", True),
    column("turn_index", COUNT, _TURN + "; null: refused before the model saw it", nullable=True),
    column("attempt", COUNT, _ATTEMPT + "; null: refused before the model saw it",
           nullable=True),
    column("model", CATEGORY, "the model the request was answered as (its name mapped to the "
           "scenario's)", nullable=True),
    column("status", COUNT, "the HTTP status sent; null: none went out (the client went away "
           "first)", nullable=True),
    column("ending", CATEGORY, "how the answer ended: complete, cut, error_event, http_error, "
           "clean_eof (the body ended with no message end), refused, aborted or server_error"),
    column("faults", CATEGORY, "the faults injected into the answer, comma-separated; null: "
           "none", nullable=True),
    column("message_count", COUNT, "messages in the request as the model saw it (system and "
           "developer messages out); null: refused before the model saw it", nullable=True,
           unit="count"),
    column("pairing_violations", COUNT, "the pairing violations found in the request, each one "
           "of our 400s (0: none)", unit="count"),
    column("first_violation", pa.string(), "the first of them, as the API words it",
           nullable=True),
    column("retry", pa.bool_(), "whether the request's bytes repeat an earlier request of the "
           "same session and turn"),
    column("since_previous_response_ns", NS, "time from the end of the session's previous "
           "response to this request's arrival; null: the session's first request",
           nullable=True),
    column("end_ns", NS, "when the answer's last byte was written (or the connection dropped); "
           "null: still open", nullable=True),
    column("first_byte_ns", NS, "when the answer's first body byte was written; null: none was",
           nullable=True),
    column("time_to_first_byte_ns", NS, "first_byte_ns minus arrival_ns", nullable=True),
    column("bytes_sent", COUNT, "body bytes written for the answer", nullable=True,
           unit="bytes"),
    column("protocol", CATEGORY, "the wire protocol the request came in: anthropic, "
           "openai-responses or openai-chat (a refused body: its endpoint's)", nullable=True),
], ("request_index",))

TOOL_CALLS = recording_table("tool_calls", [
    column("request_index", COUNT, "the request whose answer sent the call"),
    _session(_SENT_SESSION),
    column("turn_index", COUNT, "the turn of that request, from 1"),
    column("attempt", COUNT, "the attempt of that request, from 1"),
    column("tool_use_id", pa.string(), "the call's id (a Responses `call_id`, a Chat "
           "`tool_calls` id)"),
    column("name", CATEGORY, "the tool called"),
    column("block_index", COUNT, "the call's position among the response's content blocks, "
           "from 0", nullable=True),
    column("duplicate_id", pa.bool_(), "whether another block of the response has the same id",
           nullable=True),
    column("block_stop_ns", NS, "when the call's block stop was written; null: the stream never "
           "got there", nullable=True),
    column("message_stop_ns", NS, "when the response's message stop was written; null: the "
           "stream never got there", nullable=True),
    column("result_request_index", COUNT, "the first later request of the session carrying a "
           "result for the call (the block the client kept); null: none", nullable=True),
    column("is_error", pa.bool_(), "that result's is_error; null: no result", nullable=True),
    column("result_position", COUNT, "the result's position among that message's results, "
           "from 0; null: no result", nullable=True),
    column("results_in_order", pa.bool_(), "whether that message's results came in the order of "
           "the calls; null: no result", nullable=True),
    column("round_trip_ns", NS, "from the block stop to the arrival of the request carrying "
           "the result; null: no result", nullable=True),
], ("request_index", "block_index"))

RECOVERIES = recording_table("recoveries", [
    column("request_index", COUNT, "the request a fault was injected into"),
    _session("the session of that request (`toolturn.wire.identity`)"),
    column("turn_index", COUNT, "the turn of that request, from 1"),
    column("attempt", COUNT, "the attempt of that request, from 1"),
    column("faults", CATEGORY, "the faults injected, comma-separated"),
    column("recovery", CATEGORY, "what the session's next request did: " + ", ".join(
        RECOVERY_CLASSES)),
    column("next_request_index", COUNT, "that next request; null: none (stopped)",
           nullable=True),
    column("delay_ns", NS, "from the faulted answer's end to the next request's arrival "
           "(negative: it came while the answer was still being written); null: none",
           nullable=True),
], ("request_index",))

TABLES = (REQUESTS, TOOL_CALLS, RECOVERIES)
# Columns a recording made before they were added lacks: read as null there.
ADDED_COLUMNS = ("first_byte_ns", "time_to_first_byte_ns", "bytes_sent", "block_index",
                 "duplicate_id", "protocol")


@dataclass(slots=True)
class RecordedRequest:
    row: dict[str, Any]
    # Kept while the request may still be compared (its session's latest, or pending); None
    # once it cannot be.
    asked: Asked | None
    # The calls its answer wrote, kept from its answer's end while its recovery is pending.
    written: list[WrittenCall] = field(default_factory=list)
    # A request of its session that arrived while its answer was still open (a client leaving
    # a stall): its recovery is decided against it once the answer ends.
    follower: tuple[int, int, Asked] | None = None  # (request_index, arrival_ns, asked)


def rows_table(spec: TableSpec, rows: Sequence[dict[str, Any]]) -> pa.Table:
    """Rows (dicts holding every column of `spec`) as a table of its schema."""
    columns = {name: [row[name] for row in rows] for name in spec.column_names}
    return pa.Table.from_pydict(columns, schema=spec.schema)
