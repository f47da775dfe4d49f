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
  did (`RECOVERY_CLASSES`, decided by `classify`), after what delay.

A recovery stays pending until the session's next request; one with none within `give_up_ns`
of its response's end (or at the end of the recording) is `gave_up`. A session with no request
for `give_up_ns` (and none in flight) is over: its calls still awaiting results are written
without one, and a later request of it is compared with nothing before it (no retry, no time
since a previous response). Times of writes are taken as each write returns (the socket took
the bytes); a Message answered whole (`stream: false`) has its blocks stop as its body goes.
The columns in `ADDED_COLUMNS` are null in a recording made before they existed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from toolturn.metrics.schema import CATEGORY, COUNT, NS, TableSpec

SESSION = pa.uint64()
RECOVERY_CLASSES = (
    "identical_retry",      # the same request again, byte for byte
    "modified_retry",       # the same transcript, other bytes (another max_tokens, say)
    "continued_kept_blocks",  # the response's blocks kept in the transcript, the turn goes on
    "resume_message",       # a user message appended (a "continue" or resume prompt)
    "dropped_call",         # the transcript moved on without the response's calls
    "broken_transcript",    # the next request broke pairing: our 400
    "gave_up",              # no further request in time
)


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
    # Kept while the request may still be compared (its session's latest, or pending).
    messages: list[Any]
    digest: bytes  # of the body's bytes: a retry repeats them
    response_blocks: list[dict[str, Any]] = field(default_factory=list)


def _strip_cache_control(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_strip_cache_control(item) for item in value]
    return value


def _conversation(messages: list[Any]) -> list[Any]:
    """The messages that are turns (system-role ones out), without cache markers."""
    return [_strip_cache_control(m) for m in messages
            if not (isinstance(m, dict) and m.get("role") == "system")]


def blocks_of(messages: list[Any], role: str) -> list[dict[str, Any]]:
    return [block for m in messages if isinstance(m, dict) and m.get("role") == role
            and isinstance(m.get("content"), list)
            for block in m["content"] if isinstance(block, dict)]


def classify(faulted: RecordedRequest, following: RecordedRequest) -> str:
    """What `following` did about the fault injected into `faulted` (`RECOVERY_CLASSES`)."""
    if following.digest == faulted.digest:
        return "identical_retry"
    if following.row["pairing_violations"]:
        return "broken_transcript"
    before, after = _conversation(faulted.messages), _conversation(following.messages)
    if after == before:
        return "modified_retry"
    sent = {block.get("id") for block in faulted.response_blocks if block.get("id")}
    sent_texts = {block.get("text") for block in faulted.response_blocks
                  if block.get("type") == "text" and block.get("text")}
    if after[:len(before)] == before:
        extra = after[len(before):]
        kept = [block for block in blocks_of(extra, "assistant")
                if block.get("id") in sent or (block.get("type") == "text"
                                               and block.get("text") in sent_texts)]
        if kept:
            return "continued_kept_blocks"
        if any(block.get("type") == "text" for block in blocks_of(extra, "user")) or any(
                isinstance(m, dict) and m.get("role") == "user"
                and isinstance(m.get("content"), str) for m in extra):
            return "resume_message"
    return "dropped_call"


def rows_table(spec: TableSpec, rows: Sequence[dict[str, Any]]) -> pa.Table:
    """Rows (dicts holding every column of `spec`) as a table of its schema."""
    columns = {name: [row[name] for row in rows] for name in spec.column_names}
    return pa.Table.from_pydict(columns, schema=spec.schema)
