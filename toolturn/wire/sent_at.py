"""When a request was sent, as its client says: the `x-sim-sent-at` header, so that the request's
transit costs no model time.

The simulator sends a request and admits it at the same instant; a live request reaches the
server later, after the SDK built it, the event loop got to it and loopback HTTP carried it
(about 8 ms of wall time on a loaded 2-core host, 80 ms of scenario time at speed 10: a 5-14%
error on the first event). The live driver (`toolturn.live.session`, for the embedded server of
`toolturn fidelity`) sends `time.monotonic_ns()` taken when the loop's `SendRequest` was carried
out; the server counts the model's times from then instead of from its own admission, when the
request was admitted at once. The clock is the host's monotonic one, so only a client on the
same host can say it: a value that is not plain digits, lies in the future or further back than
`MAX_TRANSIT_NS` is ignored (the request is timed from its admission, as without the header).
Claude Code and the SDK never send it.
"""

from __future__ import annotations

from collections.abc import Mapping

SENT_AT_HEADER = "x-sim-sent-at"
# The longest transit believed: a value further back is another host's clock, or a stale copy.
MAX_TRANSIT_NS = 1_000_000_000


def sent_at(headers: Mapping[str, str], arrived_ns: int) -> int | None:
    """The monotonic time the request says it was sent, or None (no header, or not believed)."""
    value = headers.get(SENT_AT_HEADER)
    if value is None or not (value.isascii() and value.isdigit()):
        return None
    sent_ns = int(value)
    if not 0 <= arrived_ns - sent_ns <= MAX_TRANSIT_NS:
        return None
    return sent_ns
