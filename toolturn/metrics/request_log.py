"""What a driver knows about one model request that the runtime's record does not: the answer's
HTTP status, injected faults, event count, when the stream ended, and the loop's summary of the
response (tokens, message_stop time). One class for the simulator's requests
(`toolturn.engine.request_path`) and the live driver's (`toolturn.live.session`), so both become the
same rows of the requests and turns tables (`toolturn.engine.recorder`).

Times are the driver's clock: simulated nanoseconds, or the live driver's `now_ns` (nanoseconds
from the session's origin, times the speed).
"""

from __future__ import annotations

from dataclasses import dataclass

from toolturn.runtime.accumulator import ResponseSummary

# `status` of a request the client gave up (a user interrupt) before any answer came.
CANCELLED = "cancelled"
# `status` of a request still unanswered when the simulation stopped at its horizon (or the
# live session was stopped).
PENDING = "pending"
# `status` of a live request whose connection failed before any status came.
CONNECTION_ERROR = "connection_error"
# The summary of a response nothing of which was read.
UNREAD = ResponseSummary(0, 0, None, None)


@dataclass(slots=True)
class RequestLog:
    request_index: int  # the loop's request counter (1, 2, ...) within the session
    turn: int
    attempt: int
    model: str
    sent_ns: int
    status: str = PENDING
    # The fault injected into this request, when the driver knows it (the simulator, or our own
    # embedded server in `toolturn.fidelity.live_run`), else None.
    fault: str | None = None
    first_event_ns: int | None = None
    end_ns: int | None = None
    n_events: int = 0
    # The ids of the calls of its stream whose speculative start misfired
    # (`toolturn.runtime.protocol_timing`).
    misfired: tuple[str, ...] = ()
    # The loop's summary of what it read of the response (`ToolTurnLoop.response_summary`),
    # taken when the request ends.
    response: ResponseSummary = UNREAD

    def saw_event(self, now_ns: int) -> None:
        """One stream event arrived at `now_ns` (a driver that feeds events one by one)."""
        if self.n_events == 0:
            self.first_event_ns = now_ns
        self.n_events += 1

    def end(self, status: str | None, now_ns: int, response: ResponseSummary) -> None:
        """The request is over at `now_ns`: answered (`status` None keeps what it has), failed or
        given up, with the loop's `response` summary as of now. Only the first end counts."""
        if self.end_ns is not None:
            return
        if status is not None and self.status == PENDING:
            self.status = status
        self.end_ns = now_ns
        self.response = response

    @property
    def misfires(self) -> int:
        return len(self.misfired)

    @property
    def input_tokens(self) -> int:
        return self.response.input_tokens

    @property
    def output_tokens(self) -> int:
        return self.response.output_tokens

    @property
    def message_stop_ns(self) -> int | None:
        return self.response.message_stop_ns
