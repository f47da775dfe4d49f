"""What the engine knows about one model request that the runtime's record does not: the answer's
HTTP status, injected faults, tokens and event count, and when the stream ended."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# `status` of a request the client gave up (a user interrupt) before any answer came.
CANCELLED = "cancelled"
# `status` of a request still unanswered when the simulation stopped at its horizon.
PENDING = "pending"


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
    message_stop_ns: int | None = None
    end_ns: int | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    n_events: int = 0

    def note_stream_end(self, events: list[dict[str, Any]], times: list[int], fed: int) -> None:
        """Take tokens and the message_stop time from the events fed so far (`fed` of them, at
        `times` in simulated time)."""
        if fed == 0:
            return
        first = events[0]
        if first["type"] == "message_start":
            self.input_tokens = int(first["message"]["usage"].get("input_tokens", 0))
        # message_delta and message_stop, when they came, are among the last few events.
        for index in reversed(range(max(0, fed - 4), fed)):
            event = events[index]
            kind = event["type"]
            if kind == "message_stop":
                self.message_stop_ns = times[index]
            elif kind == "message_delta":
                self.output_tokens = int(event["usage"].get("output_tokens", 0))
                break
