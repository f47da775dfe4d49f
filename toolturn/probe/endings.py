"""How a probe case's cut ends on the wire (`ending` in suite.toml, issue 30).

A client's HTTP stack can lose the last chunk of a chunked body when the connection closes right
behind it: the Claude Code CLI lost a tool whose block stop was the last chunk before the close in
8 runs of 10. So the same cut is served three ways:

- `fin` (the default): the connection is dropped right after the last event is written;
- `late_cut`: the last event, then `late_cut_ms` (wall-clock milliseconds) of silence, then the
  drop: the client has the event before it sees the close;
- `clean_eof`: the HTTP body ends properly (its last chunk, then the terminating one) but the
  stream has no `message_stop`: a clean end of a stream that is not over.

Only a cut (`cut_before_first_block`, `cut_after_block`, `cut_in_tool_json`) has an ending.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

from toolturn.model.response import Response, StreamResponse

Ending = Literal["fin", "clean_eof", "late_cut"]
ENDINGS: tuple[Ending, ...] = ("fin", "clean_eof", "late_cut")
CUT_KINDS = frozenset({"cut_before_first_block", "cut_after_block", "cut_in_tool_json"})
DEFAULT_LATE_CUT_MS = 200.0
NS_PER_MS = 1_000_000


def end_cut(response: Response, ending: Ending, late_cut_ms: float, speed: float) -> Response:
    """`response` (a cut the fault made) ending as `ending` says, at the server's `speed` (the
    server divides model time by it: a wall-clock wait is multiplied back)."""
    if ending == "fin" or not isinstance(response, StreamResponse) or response.ending != "cut":
        return response
    if ending == "clean_eof":
        # The server ends the body with its terminating chunk, as a complete one; the events
        # stay cut, and the recording names the ending for what it was.
        return replace(response, ending="clean_eof")
    last = response.times[-1] if response.times else 0
    wait_ns = round(late_cut_ms * NS_PER_MS * speed)
    return replace(response, end_ns=max(response.end_ns, last + wait_ns))
