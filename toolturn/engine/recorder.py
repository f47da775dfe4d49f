"""A finished session's record turned into metric rows (`toolturn.metrics.schema`), once, at its
end.

The runtime's record (`loop.record`, `loop.call_records()`) and the engine's request logs are read
in one pass and dropped with the session, so memory stays flat however many sessions run; unless
an event trace was asked for (`toolturn.engine.event_trace`), which keeps a row per stream event fed
until the run is written. Rows go straight into their table's columns
(`toolturn.metrics.row_columns`: a list per column, no dict per row); every row appends to every
column of its table.

Definitions:

- A turn's `request_sent_ns` is its first attempt's; `latency_ns` runs from there to its end
  (the batch of results complete, or the chain's end for a turn that ended without a batch:
  requests failed for good, or an interrupt while waiting). `first_event_ns` is the first stream
  event of any attempt; `message_stop_ns` the last attempt's message_stop.
- `first_tool_start_ns` is the first start of a tool whose result the turn keeps, `ttfts_ns` its
  distance from `request_sent_ns` (the first attempt's); null without such a tool. A call of an
  attempt abandoned for a retry or a fallback (synthetic cause `discarded` or `fallback`) does
  not count even if it started: its work is thrown away, and counting it would credit early
  start (`streaming`) with starts the baselines, waiting for a `message_stop` that never came,
  do not make. The tools table still shows those starts. Nor does a misfired speculative start
  (cause `misfire`: cancelled when the call's arguments changed, loop rule 17): its row shows the
  wasted run (start, end at the retraction), and the call's later row its real result; both rows
  are `misfired`.
- A turn's `outcome` is `completed` when it ended with a stop reason of the API, else the loop's
  reason (`interrupted`, `stream_error`, `request_failed`), or `horizon` when the simulation
  stopped first (its end is then the horizon).
- Tokens of a turn are summed over its attempts; a request's are those the API reported
  (`message_start` input, `message_delta` output; 0 when the stream never got there), as the
  loop read them when the request ended (`RequestLog.end`); 0 for a request still open at the
  horizon, in a simulation and in a live run alike.
- A request's `retries` is its attempt number minus one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from toolturn.metrics.request_log import PENDING, RequestLog
from toolturn.metrics.row_columns import Columns, Rows
from toolturn.metrics.schema import TABLES
from toolturn.runtime.loop import ToolTurnLoop
from toolturn.runtime.outcomes import SyntheticCause
from toolturn.runtime.record import (
    FirstEvent,
    Interrupt,
    Repaired,
    RequestSent,
    Resume,
    SessionEnd,
    TurnEnd,
    WorkLost,
)

# The tables a session's rows go to (`Rows`: a list per column, `toolturn.metrics.row_columns`).
TABLE_NAMES = tuple(spec.name for spec in TABLES)
COMPLETED = "completed"
HORIZON = "horizon"
# Ends a turn can have that are the loop's, not the API's (a crash or a rewind: loop rule 16).
LOOP_ENDINGS = frozenset({"interrupted", "stream_error", "request_failed", "crash", "rewind"})
# A session strict mode stopped when its resumed transcript broke
# (`toolturn.engine.session_faults`).
BROKEN_TRANSCRIPT = "broken_transcript"
# Calls of an attempt given up for another, or withdrawn: their results are not the turn's.
_ABANDONED = frozenset({SyntheticCause.DISCARDED, SyntheticCause.FALLBACK, SyntheticCause.MISFIRE})


class FinishedSession(Protocol):
    """What the recorder reads of a finished session: a simulated one (`toolturn.engine.session`) or
    a live one (`toolturn.live.user_session.LiveSession`)."""

    @property
    def session_id(self) -> int: ...
    @property
    def arrival_ns(self) -> int: ...
    @property
    def start_ns(self) -> int | None: ...
    @property
    def end_ns(self) -> int | None: ...
    @property
    def loop(self) -> ToolTurnLoop: ...
    @property
    def requests(self) -> Sequence[RequestLog]: ...


@dataclass(slots=True)
class _TurnFacts:
    sent_ns: int
    attempts: int = 0
    first_event_ns: int | None = None
    first_tool_start_ns: int | None = None
    end_ns: int | None = None
    stop_reason: str | None = None
    n_tool_calls: int = 0
    n_repairs: int = 0
    n_synthetic: int = 0


def record_session(
    session: FinishedSession,
    rows: Rows,
    *,
    horizon_ns: int | None,
) -> None:
    """Append the rows of `session` (finished, or cut off at `horizon_ns`) to `rows`. The rows do
    not name their simulation (`schema.UNIT_COLUMNS`, the same on every row of it): the tables
    get those columns as constants when they are assembled (`toolturn.metrics.assemble`)."""
    walk = _walk_record(session, rows["repairs"])
    turns = walk.turns
    _tool_rows(session, rows["tools"], turns)
    turn_requests = _request_rows(session, rows["requests"], horizon_ns)
    _turn_rows(session, rows["turns"], horizon_ns, turns, turn_requests)
    if walk.broken:
        outcome = BROKEN_TRANSCRIPT
    else:
        outcome = COMPLETED if session.end_ns is not None else HORIZON
    sessions = rows["sessions"]
    sessions["session_id"].append(session.session_id)
    sessions["arrival_ns"].append(session.arrival_ns)
    sessions["start_ns"].append(session.start_ns)
    sessions["end_ns"].append(session.end_ns)
    sessions["n_turns"].append(session.loop.turn)
    sessions["outcome"].append(outcome)
    sessions["n_interrupts"].append(walk.interrupts)
    sessions["n_compactions"].append(walk.compactions)
    sessions["n_calls_lost"].append(walk.calls_lost)
    # Only an agent arm's session ends in an exception (`toolturn.agents.arm`).
    sessions["error_type"].append(None)
    sessions["error_message"].append(None)


@dataclass(slots=True)
class _Walk:
    """What one pass over a session's record found besides its repair rows."""

    turns: dict[int, _TurnFacts] = field(default_factory=dict)
    interrupts: int = 0
    compactions: int = 0
    calls_lost: int = 0
    # Strict mode stopped the session when a resumed transcript broke (its outcome).
    broken: bool = False


def _walk_record(session: FinishedSession, repairs: Columns) -> _Walk:
    """One pass over the record: the turns' facts, the counts, and a row per repair."""
    walk = _Walk()
    turns = walk.turns
    requests_seen = 0
    # The cause of the repairs of the next request: the resume (crash, rewind, compaction) that
    # replaced the transcript since the last request, if any.
    cause: str | None = None
    session_id = session.session_id
    for entry in session.loop.record.entries:
        match entry:
            case RequestSent():
                requests_seen += 1
                cause = None
                facts = turns.get(entry.turn)
                if facts is None:
                    facts = turns[entry.turn] = _TurnFacts(entry.time_ns)
                facts.attempts += 1
            case FirstEvent():
                facts = turns[entry.turn]
                if facts.first_event_ns is None:
                    facts.first_event_ns = entry.time_ns
            case TurnEnd():
                facts = turns[entry.turn]
                facts.end_ns = entry.time_ns
                facts.stop_reason = entry.stop_reason
                facts.n_tool_calls = entry.tool_calls
            case SessionEnd():
                if entry.reason == BROKEN_TRANSCRIPT:
                    walk.broken = True  # Its turn's request was never sent.
                    continue
                facts = turns[entry.turn]
                if facts.end_ns is None:
                    facts.end_ns = entry.time_ns
                    facts.stop_reason = entry.reason
            case Repaired():
                # Repairs are made while building a request, just before its `RequestSent` entry,
                # which is stamped with the same turn.
                repairs["session_id"].append(session_id)
                repairs["turn_index"].append(entry.turn)
                repairs["request_index"].append(requests_seen + 1)
                repairs["kind"].append(entry.repair.value)
                repairs["tool_use_id"].append(entry.tool_use_id)
                repairs["cause"].append(cause)
                facts = turns.get(entry.turn)
                if facts is None:  # A repair of the turn's first request (same time as its send).
                    facts = turns[entry.turn] = _TurnFacts(entry.time_ns)
                facts.n_repairs += 1
            case Interrupt():
                walk.interrupts += 1
            case Resume():
                cause = entry.cause
                walk.compactions += entry.cause == "compaction"
            case WorkLost():
                walk.calls_lost += 1
    return walk


def _tool_rows(
    session: FinishedSession, tools: Columns, turns: dict[int, _TurnFacts]
) -> None:
    calls = session.loop.call_records()
    misfired = {(log.turn, call_id) for log in session.requests for call_id in log.misfired}
    for call in calls:
        turn = call.turn
        cause = call.synthetic_cause
        facts = turns[turn]
        if cause is not None:
            facts.n_synthetic += 1
        start = call.start_ns
        if start is not None and cause not in _ABANDONED and (
            facts.first_tool_start_ns is None or start < facts.first_tool_start_ns
        ):
            facts.first_tool_start_ns = start
        tools["session_id"].append(session.session_id)
        tools["turn_index"].append(turn)
        tools["tool_use_id"].append(call.tool_use_id)
        tools["tool_name"].append(call.name)
        tools["block_stop_ns"].append(call.block_complete_ns)
        tools["queued_ns"].append(call.queued_ns)
        tools["start_ns"].append(start)
        tools["end_ns"].append(call.end_ns)
        tools["start_lag_ns"].append(None if start is None else start - call.block_complete_ns)
        tools["outcome"].append(PENDING if call.outcome is None else call.outcome.value)
        tools["synthetic_cause"].append(None if cause is None else cause.value)
        # A call run under its own key (`id#2`, loop rule 2a's `unchecked`) is its block's.
        tools["misfired"].append(
            bool(misfired) and (turn, call.tool_use_id.partition("#")[0]) in misfired
        )


def _request_rows(
    session: FinishedSession, requests: Columns, horizon_ns: int | None
) -> dict[int, list[Any]]:
    """Append the request rows; return per turn [model, input, output, message_stop_ns,
    misfires] of its requests (the last attempt's model and message_stop; misfires summed)."""
    per_turn: dict[int, list[Any]] = {}
    for log in session.requests:
        end_ns = log.end_ns if log.end_ns is not None else horizon_ns
        requests["session_id"].append(session.session_id)
        requests["turn_index"].append(log.turn)
        requests["request_index"].append(log.request_index)
        requests["attempt"].append(log.attempt)
        requests["model"].append(log.model)
        requests["status"].append(log.status)
        requests["retries"].append(log.attempt - 1)
        requests["fault"].append(log.fault)
        requests["sent_ns"].append(log.sent_ns)
        requests["first_event_ns"].append(log.first_event_ns)
        requests["end_ns"].append(end_ns if end_ns is not None else log.sent_ns)
        requests["input_tokens"].append(log.input_tokens)
        requests["output_tokens"].append(log.output_tokens)
        requests["n_events"].append(log.n_events)
        totals = per_turn.get(log.turn)
        if totals is None:
            per_turn[log.turn] = [
                log.model, log.input_tokens, log.output_tokens, log.message_stop_ns, log.misfires
            ]
        else:
            totals[0] = log.model
            totals[1] += log.input_tokens
            totals[2] += log.output_tokens
            totals[3] = log.message_stop_ns
            totals[4] += log.misfires
    return per_turn


def _turn_rows(
    session: FinishedSession,
    out: Columns,
    horizon_ns: int | None,
    turns: dict[int, _TurnFacts],
    turn_requests: dict[int, list[Any]],
) -> None:
    for turn, facts in turns.items():
        end_ns = facts.end_ns
        if end_ns is None:
            outcome = HORIZON
            end_ns = horizon_ns if horizon_ns is not None else facts.sent_ns
        elif facts.stop_reason in LOOP_ENDINGS:
            outcome = str(facts.stop_reason)
        else:
            outcome = COMPLETED
        model, input_tokens, output_tokens, message_stop_ns, misfires = turn_requests.get(
            turn, [None, None, None, None, 0]
        )
        first_tool = facts.first_tool_start_ns
        out["session_id"].append(session.session_id)
        out["turn_index"].append(turn)
        out["model"].append(model)
        out["request_sent_ns"].append(facts.sent_ns)
        out["first_event_ns"].append(facts.first_event_ns)
        out["message_stop_ns"].append(message_stop_ns)
        out["first_tool_start_ns"].append(first_tool)
        out["ttfts_ns"].append(None if first_tool is None else first_tool - facts.sent_ns)
        out["turn_end_ns"].append(end_ns)
        out["latency_ns"].append(end_ns - facts.sent_ns)
        out["n_attempts"].append(facts.attempts)
        out["n_tool_calls"].append(facts.n_tool_calls)
        out["n_synthetic_results"].append(facts.n_synthetic)
        out["n_repairs"].append(facts.n_repairs)
        out["misfires"].append(misfires)
        out["input_tokens"].append(input_tokens)
        out["output_tokens"].append(output_tokens)
        out["stop_reason"].append(facts.stop_reason)
        out["outcome"].append(outcome)
