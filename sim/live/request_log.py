"""What the live driver saw of one model request, in the shape of the simulator's request log
(`sim.engine.request_log.RequestLog`, the same fields), so a live session's requests become the
same rows of the requests and turns tables.

Times are the driver's (`now_ns`: nanoseconds from the session's origin, times the speed). The
tokens and the message_stop time are read from the events as they arrive; `fault` is what the
server says it injected, when it is our own embedded server (`sim.fidelity.live_run`), else null.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# `status` of a request the client gave up (a user interrupt) before it ended, of one still
# unanswered when the session was stopped, and of one whose connection failed before a status.
CANCELLED = "cancelled"
PENDING = "pending"
CONNECTION_ERROR = "connection_error"


@dataclass(slots=True)
class LiveRequest:
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

    def saw(self, event: dict[str, Any], now_ns: int) -> None:
        """One stream event arrived at `now_ns`."""
        if self.n_events == 0:
            self.first_event_ns = now_ns
        self.n_events += 1
        kind = event.get("type")
        if kind == "message_start":
            usage = event.get("message", {}).get("usage") or {}
            self.input_tokens = int(usage.get("input_tokens") or 0)
        elif kind == "message_delta":
            self.output_tokens = int((event.get("usage") or {}).get("output_tokens") or 0)
        elif kind == "message_stop":
            self.message_stop_ns = now_ns

    def ended(self, status: str | None, now_ns: int) -> None:
        """The request is over at `now_ns`: answered (`status` None keeps what it has), failed
        or given up. Only the first end counts."""
        if self.end_ns is not None:
            return
        if status is not None and self.status == PENDING:
            self.status = status
        self.end_ns = now_ns
