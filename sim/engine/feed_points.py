"""Where a response stream needs simulated time of its own: the decision points.

Feeding events one simpy event each would cost far more than the runtime spends on them. Only an
event that can make the loop hand out work needs to be fed at its own moment: the
`content_block_stop` of a `tool_use` block (the executor may start the call), and the last event
(`message_stop`, or the `error` event or cut that ends the stream). Every other event (text and
thinking deltas, pings, the stops of other blocks) only accumulates, so it is fed together with the
next decision point, each event with its own timestamp. A user interrupt in between feeds exactly
the events due before it (`sim.engine.session`).
"""

from __future__ import annotations

from typing import Any


def feed_points(
    events: list[dict[str, Any]], tool_stops: tuple[int, ...] | None = None
) -> list[int]:
    """Indices of the events after which the stream must be fed, increasing; the last event's
    index is always the last one (empty for an empty stream). `tool_stops`, the indices of the
    tool_use blocks' stops when the model gave them (`StreamResponse.tool_stops`), spares a pass
    over every event."""
    if tool_stops is not None:
        points = list(tool_stops)
    else:
        points = []
        tool_blocks: set[int] = set()
        for position, event in enumerate(events):
            kind = event["type"]
            if kind == "content_block_start":
                if event["content_block"]["type"] == "tool_use":
                    tool_blocks.add(event["index"])
            elif kind == "content_block_stop" and event["index"] in tool_blocks:
                points.append(position)
    last = len(events) - 1
    if last >= 0 and (not points or points[-1] != last):
        points.append(last)
    return points
