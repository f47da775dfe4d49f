"""The raw-event trace of one simulation: a row per stream event fed to the runtime (the `events`
table), kept only when a trace is asked for."""

from __future__ import annotations

from typing import Any

# Events whose "index" is a content block's (the trace's `block_index`).
_BLOCK_EVENTS = frozenset({"content_block_start", "content_block_delta", "content_block_stop"})


class EventTrace:
    """The raw-event trace of one simulation (`schema.EVENTS`, without run_id, policy and load):
    a row per stream event fed to the runtime, kept column by column (no dict per event) until
    the run is written. Only made when a trace is asked for; memory grows with the run."""

    __slots__ = (
        "block_index",
        "delta_type",
        "event_index",
        "request_index",
        "session_id",
        "time_ns",
        "turn_index",
        "type",
    )

    def __init__(self) -> None:
        self.session_id: list[int] = []
        self.turn_index: list[int] = []
        self.request_index: list[int] = []
        self.event_index: list[int] = []
        self.time_ns: list[int] = []
        self.type: list[str] = []
        self.block_index: list[int | None] = []
        self.delta_type: list[str | None] = []

    def __len__(self) -> int:
        return len(self.time_ns)

    def take(
        self,
        session_id: int,
        turn: int,
        request_index: int,
        events: list[dict[str, Any]],
        times: list[int],
        start: int,
        stop: int,
    ) -> None:
        """Events `start` to `stop` (exclusive) of a request's stream, just fed at `times`."""
        count = stop - start
        if count <= 0:
            return
        self.session_id.extend([session_id] * count)
        self.turn_index.extend([turn] * count)
        self.request_index.extend([request_index] * count)
        self.event_index.extend(range(start, stop))
        self.time_ns.extend(times[start:stop])
        types, blocks, deltas = self.type, self.block_index, self.delta_type
        for index in range(start, stop):
            event = events[index]
            kind = event["type"]
            types.append(kind)
            if kind in _BLOCK_EVENTS:
                blocks.append(event["index"])
                deltas.append(event["delta"]["type"] if kind == "content_block_delta" else None)
            else:
                blocks.append(None)
                deltas.append(None)

    def columns(self) -> dict[str, list[Any]]:
        """The rows as columns of `schema.EVENTS` (every column but those assembly adds:
        `toolturn.metrics.row_columns.ADDED_COLUMNS`)."""
        return {
            "session_id": self.session_id,
            "turn_index": self.turn_index,
            "request_index": self.request_index,
            "event_index": self.event_index,
            "time_ns": self.time_ns,
            "type": self.type,
            "block_index": self.block_index,
            "delta_type": self.delta_type,
        }
