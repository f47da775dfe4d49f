"""Faults that strike a laid-out stream: error events, cuts and stalls; then keep-alive pings.

Every cut or error candidate is a number of events kept; the earliest wins and ends the stream
(a cut: the connection closes when the next event was due; an error: an `error` event takes the
place of the next event). A stall inserts a silence before one event; it then resumes (later
events shift) or ends in a cut when the silence is over. A stall at or after the winning cut has
no effect.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

from toolturn.distributions import Distribution
from toolturn.limits import MAX_PINGS_PER_STREAM
from toolturn.model.api_errors import error_event
from toolturn.model.faults import CUT_FAULTS, ERROR_EVENT_FAULTS, STALL, FaultDice
from toolturn.model.response import StreamEnding
from toolturn.model.shared_events import PING
from toolturn.model.stream import Timeline


@dataclass(slots=True)  # not frozen: a frozen init sets each field through object.__setattr__
class Disrupted:
    times: list[int]
    events: list[dict[str, Any]]
    end_ns: int
    ending: StreamEnding
    faults: tuple[str, ...]
    stall_at: int | None  # index of the first event after a stall (or of the cut), if any


def _first_delta(timeline: Timeline, block: int) -> int:
    # Block 0's start is followed by the stream's first ping.
    return timeline.spans[block].start + (2 if block == 0 else 1)


# Disrupted when none of these can fire: the stream as laid out.
_STREAM_FAULTS = frozenset((*CUT_FAULTS, *ERROR_EVENT_FAULTS, STALL))


def _cut_candidates(timeline: Timeline, dice: FaultDice) -> list[tuple[int, str]]:
    """(events kept, fault) for every cut that fires."""
    spans = timeline.spans
    candidates: list[tuple[int, str]] = []
    if dice.on.isdisjoint(CUT_FAULTS):  # nothing to ask (a kind that cannot fire draws nothing)
        return candidates
    if dice.fires_once("cut_before_first_block"):
        first_block = spans[0].start if spans else timeline.message_delta
        candidates.append((first_block, "cut_before_first_block"))
    texts = [i for i, span in enumerate(spans) if span.type == "text"]
    tools = [i for i, span in enumerate(spans) if span.type == "tool_use"]
    for position in dice.firing("cut_mid_text", len(texts)):
        block = texts[position]
        first = _first_delta(timeline, block)
        # Keep some of its deltas, never all: the block does not complete.
        kept = int(dice.rng("cut_mid_text").integers(0, max(spans[block].stop - first, 1)))
        candidates.append((first + kept, "cut_mid_text"))
    for position in dice.firing("cut_mid_tool_json", len(tools)):
        block = tools[position]
        first = _first_delta(timeline, block)
        # At least the opening empty delta, never the closing fragment.
        deltas = spans[block].stop - first
        kept = int(dice.rng("cut_mid_tool_json").integers(1, max(deltas, 2)))
        candidates.append((first + kept, "cut_mid_tool_json"))
    for position in dice.firing("cut_after_tool_use_stop", len(tools)):
        candidates.append((spans[tools[position]].stop + 1, "cut_after_tool_use_stop"))
    if dice.fires_once("cut_before_message_stop"):
        candidates.append((timeline.message_delta + 1, "cut_before_message_stop"))
    return candidates


def disrupt(
    timeline: Timeline,
    dice: FaultDice,
    stall_duration: Distribution,
    stall_resume_probability: float,
) -> Disrupted:
    times, events = timeline.times, timeline.events
    if dice.on.isdisjoint(_STREAM_FAULTS):  # the usual case: nothing can strike
        return Disrupted(times, events, times[-1], "complete", (), None)
    last = len(events) - 1  # message_stop: errors and stalls strike before it at the latest
    ends: list[tuple[int, str]] = _cut_candidates(timeline, dice)
    for kind in ERROR_EVENT_FAULTS:
        if kind in dice.on and dice.fires_once(kind):
            ends.append((int(dice.rng(kind).integers(1, last + 1)), kind))
    stall: tuple[int, int, bool] | None = None
    if STALL in dice.on and dice.fires_once(STALL):
        rng = dice.rng(STALL)
        at = int(rng.integers(1, last + 1))
        stall = (at, stall_duration.sample_ns(rng), bool(rng.random() < stall_resume_probability))
    cut_at, cut_fault = min(ends, default=(len(events), ""))
    if stall is not None and stall[0] >= cut_at:
        stall = None
    faults: list[str] = []
    stall_at = None
    if stall is not None:
        at, duration, resumes = stall
        faults.append(STALL)
        stall_at = at
        if resumes:
            times = times[:at] + [t + duration for t in times[at:]]
        else:
            end_ns = times[at] + duration
            return Disrupted(times[:at], events[:at], end_ns, "cut", tuple(faults), at)
    if not cut_fault:
        return Disrupted(times, events, times[-1], "complete", tuple(faults), stall_at)
    faults.append(cut_fault)
    if cut_fault in ERROR_EVENT_FAULTS:
        error_type, message = ERROR_EVENT_FAULTS[cut_fault]
        at_ns = times[cut_at]
        return Disrupted(
            [*times[:cut_at], at_ns],
            [*events[:cut_at], error_event(error_type, message)],
            at_ns,
            "error_event",
            tuple(faults),
            stall_at,
        )
    return Disrupted(times[:cut_at], events[:cut_at], times[cut_at], "cut", tuple(faults), stall_at)


def scripted_cut(timeline: Timeline, kind: str, silence_ns: int) -> Disrupted:
    """The stream cut as fault `kind` cuts it (`cut_before_first_block`, or
    `cut_before_message_stop`: every block complete), the connection silent for `silence_ns`
    after the last event kept and before it closes: an explicit script's cut, drawing nothing."""
    if kind == "cut_before_first_block":
        kept = timeline.spans[0].start if timeline.spans else timeline.message_delta
    elif kind == "cut_before_message_stop":
        kept = timeline.message_delta + 1
    else:
        raise ValueError(f"not a cut a script can name: {kind}")
    times, events = timeline.times, timeline.events
    # The silence is a stall's: no pings in it (a stalled server sends nothing).
    stall_at = kept if silence_ns else None
    return Disrupted(
        times[:kept], events[:kept], times[kept] + silence_ns, "cut", (kind,), stall_at
    )


def with_keepalive_pings(
    times: list[int],
    events: list[dict[str, Any]],
    end_ns: int,
    interval_ns: int,
    stall_at: int | None,
    marks: tuple[int, ...] = (),
) -> tuple[list[int], list[dict[str, Any]], tuple[int, ...]]:
    """The stream's times and events with a ping every `interval_ns` of silence while the
    connection is open, except in a stall (a stalled server sends nothing), and at most
    `MAX_PINGS_PER_STREAM` of them (the connection then stays silent until its next event); and
    `marks`, indices of events (increasing), moved to where those events are once the pings are
    in. The lists and marks given are returned as they are when no ping is due."""
    # The usual case: no silence that long. A stream that lasts less than the interval has none
    # (settled without a pass over the gaps).
    if end_ns - times[0] <= interval_ns or (
        max(map(operator.sub, times[1:], times[:-1]), default=0) <= interval_ns
        and end_ns - times[-1] <= interval_ns
    ):
        return times, events, marks
    pinged_times: list[int] = []
    pinged: list[dict[str, Any]] = []
    left = MAX_PINGS_PER_STREAM
    moved: list[int] = []
    next_mark = iter(marks)
    mark = next(next_mark, -1)
    previous = times[0]
    for index, (at, event) in enumerate(zip(times, events, strict=True)):
        if at - previous > interval_ns and index != stall_at and left:
            silence = range(previous + interval_ns, at, interval_ns)[:left]
            left -= len(silence)
            pinged_times.extend(silence)
            pinged.extend([PING] * len(silence))
        if index == mark:
            moved.append(len(pinged))
            mark = next(next_mark, -1)
        pinged_times.append(at)
        pinged.append(event)
        previous = at
    if end_ns - previous > interval_ns and stall_at != len(events) and left:
        silence = range(previous + interval_ns, end_ns, interval_ns)[:left]
        pinged_times.extend(silence)
        pinged.extend([PING] * len(silence))
    return pinged_times, pinged, tuple(moved)
