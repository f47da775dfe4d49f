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

from toolturn.metrics.schema import CATEGORY, COUNT, NS, TableSpec
from toolturn.wire.next_step import CLASSES, Asked, WrittenCall

SESSION = pa.uint64()
# The classes of `toolturn.wire.next_step`, shared with the probe's scorecard: one vocabulary.
RECOVERY_CLASSES = CLASSES


def _f(name: str, kind: pa.DataType, nullable: bool = False) -> pa.Field:
    return pa.field(name, kind, nullable=nullable)


REQUESTS = TableSpec("requests", pa.schema([
    _f("request_index", COUNT), _f("arrival_ns", NS), _f("session_id", SESSION, True),
    _f("turn_index", COUNT, True), _f("attempt", COUNT, True), _f("model", CATEGORY, True),
    _f("status", COUNT, True), _f("ending", CATEGORY), _f("faults", CATEGORY, True),
    _f("message_count", COUNT, True), _f("pairing_violations", COUNT),
    _f("first_violation", pa.string(), True), _f("retry", pa.bool_()),
    _f("since_previous_response_ns", NS, True), _f("end_ns", NS, True),
    _f("first_byte_ns", NS, True), _f("time_to_first_byte_ns", NS, True),
    _f("bytes_sent", COUNT, True), _f("protocol", CATEGORY, True),
]), ("request_index",))

TOOL_CALLS = TableSpec("tool_calls", pa.schema([
    _f("request_index", COUNT), _f("session_id", SESSION), _f("turn_index", COUNT),
    _f("attempt", COUNT), _f("tool_use_id", pa.string()), _f("name", CATEGORY),
    _f("block_index", COUNT, True), _f("duplicate_id", pa.bool_(), True),
    _f("block_stop_ns", NS, True), _f("message_stop_ns", NS, True),
    _f("result_request_index", COUNT, True), _f("is_error", pa.bool_(), True),
    _f("result_position", COUNT, True), _f("results_in_order", pa.bool_(), True),
    _f("round_trip_ns", NS, True),
]), ("request_index", "block_index"))

RECOVERIES = TableSpec("recoveries", pa.schema([
    _f("request_index", COUNT), _f("session_id", SESSION), _f("turn_index", COUNT),
    _f("attempt", COUNT), _f("faults", CATEGORY), _f("recovery", CATEGORY),
    _f("next_request_index", COUNT, True), _f("delay_ns", NS, True),
]), ("request_index",))

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
