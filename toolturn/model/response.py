"""What the model answers one request with: an HTTP error, or a timed stream of events.

Times are integer nanoseconds from the moment the request was sent (`origin_ns`, 0 unless the
caller gives its clock's time to `MockModel.respond`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal


@dataclass(frozen=True, slots=True)
class Turn:
    """Who is asking: the identity that keys every random draw of the response."""

    session_id: int
    turn_index: int
    attempt: int = 0


@dataclass(frozen=True, slots=True)
class HttpError:
    """An error status before any streaming, with the API's JSON error body."""

    status: int
    body: dict[str, Any]
    at_ns: int
    retry_after_ns: int | None = None
    faults: tuple[str, ...] = ()


# `clean_eof`: the body ended properly (its terminating chunk) before the stream's own end,
# the probe's ending of a cut (`toolturn.probe.endings`); served as `complete` is, recorded apart.
StreamEnding = Literal["complete", "error_event", "cut", "clean_eof"]


@dataclass(frozen=True, slots=True)
class StreamResponse:
    """HTTP 200 and a stream: `events` in sending order, `times[i]` the time of `events[i]`
    (non-decreasing). Two lists rather than pairs: the runtime takes them apart
    (`ToolTurnLoop.on_events`), and a stream is made and fed far more often than it is read.

    `end_ns` is when the server closes the connection: the last event's time for a complete
    stream or one ended by an `error` event, later for a cut that follows a silence (a stall).
    `faults` names every fault that took effect, in the order they were decided.
    `tool_stops`: the indices in `events` of the `content_block_stop` of each tool_use block, in
    order (the model's layout, keep-alive pings counted), so that no driver scans the events.
    """

    times: list[int]
    events: list[dict[str, Any]]
    end_ns: int
    ending: StreamEnding
    message_id: str
    model: str
    tool_stops: tuple[int, ...]
    faults: tuple[str, ...] = ()


Response = HttpError | StreamResponse
