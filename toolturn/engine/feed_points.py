"""Where a response stream needs simulated time of its own: the decision points.

Feeding events one simpy event each would cost far more than the runtime spends on them. Only an
event that can make the loop hand out work needs to be fed at its own moment: the
`content_block_stop` of a `tool_use` block (the executor may start the call), and the last event
(`message_stop`, or the `error` event or cut that ends the stream). Every other event (text and
thinking deltas, pings, the stops of other blocks) only accumulates, so it is fed together with the
next decision point, each event with its own timestamp. A user interrupt in between feeds exactly
the events due before it (`toolturn.engine.user_hooks`).
"""

from __future__ import annotations


def feed_points(tool_stops: tuple[int, ...], count: int) -> list[int]:
    """Indices of the events after which a stream of `count` events must be fed, increasing:
    `tool_stops`, the indices of its tool_use blocks' stops as the model laid them out
    (`StreamResponse.tool_stops`), then the last event's (empty for an empty stream). No pass
    over the events: the model knows where it put them."""
    points = list(tool_stops)
    last = count - 1
    if last >= 0 and (not points or points[-1] != last):
        points.append(last)
    return points
