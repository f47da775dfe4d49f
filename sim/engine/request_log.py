"""What the engine knows about one model request that the runtime's record does not: the answer's
HTTP status, injected faults, event count, when the stream ended, and the loop's summary of the
response (tokens, message_stop time)."""

from __future__ import annotations

from dataclasses import dataclass

from sim.runtime.accumulator import ResponseSummary

# `status` of a request the client gave up (a user interrupt) before any answer came.
CANCELLED = "cancelled"
# `status` of a request still unanswered when the simulation stopped at its horizon.
PENDING = "pending"
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
    fault: str | None = None
    first_event_ns: int | None = None
    end_ns: int | None = None
    n_events: int = 0
    # The loop's summary of what it read of the response (`ToolTurnLoop.response_summary`),
    # taken when the stream ends.
    response: ResponseSummary = UNREAD

    @property
    def input_tokens(self) -> int:
        return self.response.input_tokens

    @property
    def output_tokens(self) -> int:
        return self.response.output_tokens

    @property
    def message_stop_ns(self) -> int | None:
        return self.response.message_stop_ns
