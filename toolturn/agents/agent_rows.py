"""An agent session's rows of the run tables (`toolturn.metrics.schema`), made from what the mock
saw (`toolturn.agents.seen_requests`) and what `call_tool` noted (`toolturn.agents.session`): the
same tables as a simulated session's, so the agent arm sits beside the policies in every summary.

Definitions, where a user's runtime is seen only from outside:

- A turn is the mock's (`toolturn.agents.seen_requests`: from 1, as the simulator counts turns,
  and on past a crash): every attempt of it. `request_sent_ns` is its first attempt's arrival;
  `first_event_ns` the first event sent of any attempt; `message_stop_ns` the last attempt's.
- `first_tool_start_ns` is when the first `call_tool` of the turn was entered (the runtime's
  decision to run it; permission waits come after), `ttfts_ns` its distance from
  `request_sent_ns`.
- A turn ends when its last answer is over and its last tool call returned, whichever is later
  (or at the horizon). `outcome` is `completed` when its last attempt carried a stop reason,
  `interrupted` when the agent stopped reading it, `request_failed` for an HTTP error,
  `stream_error` for a stream that ended without one, `crash` when the session's process crashed
  during it (it ends then), `horizon` when the run stopped first; a
  turn answered in full whose calls the agent cancelled, none failing, is `interrupted` too (the
  user stopped it while its tools ran; a failing shell cancelling its siblings is not that).
- `repairs`: a row per pairing violation the mock's request check found on arrival (kind
  `violation_at_mock`, the violation's text as `cause`), the requests a runtime's own repair
  would have fixed. A runtime's repairs themselves are invisible from outside; synthetic results
  too (`n_synthetic_results` is 0).
- `tools`: a row per `call_tool` (`queued_ns` its entry, `start_ns` the tool's start after any
  permission wait), and a row per tool_use block sent that no call claimed (outcome `not_run`).
- A session's `outcome` is `completed`, `interrupted` (an interrupt's CancelledError ended
  `agent()`), `agent_error` (another exception did: its type and message are `error_type` and
  `error_message`, null otherwise) or `horizon`. `n_interrupts` counts the interrupts the session
  made, or, for an agent that plays the simulated user itself, its turns seen `interrupted`.
  `n_calls_lost` counts the calls running when a crash came (their results cannot have been
  persisted); `n_compactions` is 0: a runtime's compactions, like its rewinds, are its own
  choices and invisible from outside (the mock sees only the transcript they left).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from toolturn.agents.seen_requests import CANCELLED, SeenRequest, SeenSession
from toolturn.agents.session import SessionFacts, ToolRun
from toolturn.metrics.request_log import PENDING
from toolturn.metrics.row_columns import Columns, Rows, empty_rows

VIOLATION = "violation_at_mock"
NOT_RUN = "not_run"
INTERRUPTED = "interrupted"
CRASH = "crash"
_FAILED = frozenset({"error", "exception"})


@dataclass(frozen=True, slots=True)
class SessionEnd:
    """How and when an agent session ended (`end_ns` None: cut at `horizon_ns`); for
    `agent_error`, the exception's type and message."""

    arrival_ns: int
    start_ns: int
    end_ns: int | None
    outcome: str
    horizon_ns: int | None = None
    error: tuple[str, str] | None = None


def agent_rows(seen: SeenSession, facts: SessionFacts, end: SessionEnd) -> Rows:
    """Every table's rows of one agent session (without its unit's columns: assembly adds them,
    `toolturn.metrics.row_columns.ADDED_COLUMNS`)."""
    rows = empty_rows()
    stop_ns = end.end_ns if end.end_ns is not None else end.horizon_ns or end.start_ns
    by_turn: dict[int, list[SeenRequest]] = defaultdict(list)
    for request in seen.requests:
        by_turn[request.turn_index].append(request)
    runs: dict[int, list[ToolRun]] = defaultdict(list)
    for run in facts.runs:
        runs[run.turn_index].append(run)
    for request in seen.requests:
        _request_row(rows["requests"], seen.session_id, request, stop_ns)
        for violation in request.violations:
            _append(rows["repairs"], session_id=seen.session_id,
                    turn_index=request.turn_index, request_index=request.request_index,
                    kind=VIOLATION, tool_use_id=None, cause=violation)
    for turn, requests in sorted(by_turn.items()):
        _turn_row(rows["turns"], seen.session_id, turn, requests, runs[turn],
                  facts.crashes.get(turn), stop_ns)
    _tool_rows(rows["tools"], seen, facts, stop_ns)
    interrupts = facts.interrupts
    if facts.agent_plays_user:
        interrupts = rows["turns"]["outcome"].count(INTERRUPTED)
    error_type, error_message = end.error or (None, None)
    _append(rows["sessions"], session_id=seen.session_id, arrival_ns=end.arrival_ns,
            start_ns=end.start_ns, end_ns=end.end_ns, n_turns=len(by_turn),
            outcome=end.outcome, n_interrupts=interrupts, n_compactions=0,
            n_calls_lost=facts.calls_lost, error_type=error_type, error_message=error_message)
    return rows


def _append(table: Columns, **values: Any) -> None:
    for name, value in values.items():
        table[name].append(value)


def _request_row(table: Columns, session_id: int, request: SeenRequest, stop_ns: int) -> None:
    _append(table, session_id=session_id, turn_index=request.turn_index,
            request_index=request.request_index, attempt=request.attempt, model=request.model,
            status=request.status, retries=request.attempt - 1, fault=request.fault,
            sent_ns=request.sent_ns, first_event_ns=request.first_event_ns,
            end_ns=request.end_ns if request.end_ns is not None else stop_ns,
            input_tokens=request.input_tokens, output_tokens=request.output_tokens,
            n_events=request.n_events)


def _turn_outcome(last: SeenRequest, runs: list[ToolRun], cut: bool, crashed: bool) -> str:
    if crashed:
        return CRASH
    if cut:
        return "horizon"
    if last.stop_reason is not None and last.message_stop_ns is not None:
        # Calls cancelled with no failure among them to explain it (a failing shell cancels
        # its siblings): the user stopped the turn while its tools ran.
        outcomes = {run.outcome for run in runs}
        if "cancelled" in outcomes and not outcomes & _FAILED:
            return INTERRUPTED
        return "completed"
    if last.status == CANCELLED:
        return INTERRUPTED
    if last.status not in ("200", PENDING):
        return "request_failed"
    return "stream_error"


def _turn_row(table: Columns, session_id: int, turn: int, requests: list[SeenRequest],
              runs: list[ToolRun], crash_ns: int | None, stop_ns: int) -> None:
    first, last = requests[0], requests[-1]
    ends = [request.end_ns for request in requests] + [run.end_ns for run in runs]
    cut = any(value is None for value in ends)
    if crash_ns is not None:
        turn_end = crash_ns  # the process died: the turn ends there, whatever was running
    else:
        turn_end = stop_ns if cut else max(value for value in ends if value is not None)
    first_events = [r.first_event_ns for r in requests if r.first_event_ns is not None]
    first_tool = min((run.entered_ns for run in runs), default=None)
    _append(table, session_id=session_id, turn_index=turn, model=first.model,
            request_sent_ns=first.sent_ns, first_event_ns=min(first_events, default=None),
            message_stop_ns=last.message_stop_ns, first_tool_start_ns=first_tool,
            ttfts_ns=None if first_tool is None else first_tool - first.sent_ns,
            turn_end_ns=turn_end, latency_ns=turn_end - first.sent_ns,
            n_attempts=len(requests), n_tool_calls=len(last.calls), n_synthetic_results=0,
            n_repairs=sum(len(r.violations) for r in requests), misfires=0,
            input_tokens=sum(r.input_tokens for r in requests),
            output_tokens=sum(r.output_tokens for r in requests),
            stop_reason=last.stop_reason,
            outcome=_turn_outcome(last, runs, cut, crash_ns is not None))


def _tool_rows(table: Columns, seen: SeenSession, facts: SessionFacts, stop_ns: int) -> None:
    for run in facts.runs:
        _append(table, session_id=seen.session_id, turn_index=run.turn_index,
                tool_use_id=run.tool_use_id, tool_name=run.name, block_stop_ns=run.block_stop_ns,
                queued_ns=run.entered_ns, start_ns=run.start_ns,
                end_ns=run.end_ns if run.end_ns is not None else stop_ns,
                start_lag_ns=None if run.start_ns is None else run.start_ns - run.block_stop_ns,
                outcome=run.outcome, synthetic_cause=None, misfired=False)
    for request in seen.requests:
        for call in request.calls:
            if not call.claimed:
                _append(table, session_id=seen.session_id,
                        turn_index=request.turn_index, tool_use_id=call.tool_use_id,
                        tool_name=call.name, block_stop_ns=call.block_stop_ns, queued_ns=None,
                        start_ns=None, end_ns=None, start_lag_ns=None, outcome=NOT_RUN,
                        synthetic_cause=None, misfired=False)

