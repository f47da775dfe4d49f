"""`ToolTurnLoop.on_events` and `StreamAccumulator.append_deltas`: a batch of events does exactly
what the same events do one `on_event` at a time, however the stream is split into batches,
including streams that break the protocol."""

from __future__ import annotations

import copy
import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.loop_tools import TOOLS
from tests.helpers.runtime_script import (
    error_event,
    message_end,
    message_start,
    text_block,
    tool_use_block,
)
from toolturn.runtime.accumulator import StreamAccumulator, StreamProtocolError
from toolturn.runtime.commands import StartTool
from toolturn.runtime.loop import ToolTurnLoop
from toolturn.runtime.record import RequestSent, StreamError

Event = dict[str, Any]
TOOL_TURN = [
    message_start("msg_1"),
    *text_block(0, "Let me look at both files.", parts=5),
    *tool_use_block(1, "toolu_1", "Read", {"path": "/a"}, parts=4),
    {"type": "ping"},
    *tool_use_block(2, "toolu_2", "Bash", {"command": "ls -la"}, parts=6),
    *message_end("tool_use"),
]
# Deltas that are not plain appends, each somewhere in a tool turn: a stopped block, an unknown
# index, an unhashable index, a delta of the wrong type, a text that is not a string, no index,
# a delta that is not an object.
BROKEN_DELTAS = [
    {"type": "content_block_delta", "delta": {"type": "input_json_delta", "partial_json": "{"}},
    {"type": "content_block_delta", "index": 1, "delta": "oops"},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "late"}},
    {"type": "content_block_delta", "index": 9, "delta": {"type": "text_delta", "text": "x"}},
    {"type": "content_block_delta", "index": [1], "delta": {"type": "text_delta", "text": "x"}},
    {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "x"}},
    {
        "type": "content_block_delta",
        "index": 1,
        "delta": {"type": "input_json_delta", "partial_json": 0},
    },
]


def _streams() -> list[list[Event]]:
    streams = [TOOL_TURN, TOOL_TURN[:9], [*TOOL_TURN[:12], error_event()]]
    for broken in BROKEN_DELTAS:
        streams.append([*TOOL_TURN[:9], broken, *TOOL_TURN[9:]])
    return streams


def _one_by_one(events: list[Event]) -> tuple[ToolTurnLoop, list[tuple[int, Any]]]:
    loop = ToolTurnLoop(TOOLS, model="model-a")
    loop.start("go", 0)
    out: list[tuple[int, Any]] = []
    for position, event in enumerate(events):
        now = 100 + 10 * position
        out += [(now, command) for command in loop.on_event(event, now, 1)]
    return loop, out


def _in_batches(events: list[Event], cuts: list[int]) -> tuple[ToolTurnLoop, list[tuple[int, Any]]]:
    loop = ToolTurnLoop(TOOLS, model="model-a")
    loop.start("go", 0)
    times = [100 + 10 * position for position in range(len(events))]
    out: list[tuple[int, Any]] = []
    bounds = sorted({0, len(events), *(cut % (len(events) + 1) for cut in cuts)})
    for start, stop in itertools.pairwise(bounds):
        fed = start
        while fed < stop:
            commands, taken = loop.on_events(events[fed:stop], times[fed:stop], 1)
            assert 0 < taken <= stop - fed
            fed += taken
            # Stamped with the last event taken: equal to the single-event times only if a
            # batch stops at the event that made its commands.
            out += [(times[fed - 1], command) for command in commands]
    return loop, out


def _state(loop: ToolTurnLoop) -> tuple[Any, ...]:
    return (loop.messages, loop.record.entries, loop.phase, loop.call_records())


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(range(len(_streams()))), st.lists(st.integers(0, 60), max_size=6))
def test_batches_do_what_single_events_do(which: int, cuts: list[int]) -> None:
    events = _streams()[which]
    single, single_out = _one_by_one(copy.deepcopy(events))
    batched, batched_out = _in_batches(copy.deepcopy(events), cuts)
    assert batched_out == single_out
    assert _state(batched) == _state(single)


def test_a_batch_for_an_older_request_is_ignored_whole() -> None:
    loop = ToolTurnLoop(TOOLS, model="model-a")
    loop.start("go", 0)
    times = list(range(len(TOOL_TURN)))
    assert loop.on_events(TOOL_TURN, times, request_id=7) == ([], len(TOOL_TURN))
    assert type(loop.record.entries[-1]) is RequestSent


def test_append_deltas_takes_plain_deltas_and_stops_at_anything_else() -> None:
    accumulator = StreamAccumulator()
    events = [*TOOL_TURN[:4], BROKEN_DELTAS[5], *TOOL_TURN[4:]]
    assert accumulator.append_deltas(events, 0) == 0  # not started: nothing is a plain delta
    accumulator.feed(events[0])
    accumulator.feed(events[1])
    # Two text deltas, then a delta for block 1, not started: left for feed, which rejects it.
    assert accumulator.append_deltas(events, 2) == 4
    with pytest.raises(StreamProtocolError, match="no started block"):
        accumulator.feed(events[4])
    assert accumulator.append_deltas(events, 5) == 5 + 3  # the rest of the text, up to its stop
    done = accumulator.feed(events[8])
    assert done is not None and done.block["text"] == "Let me look at both files."


def test_append_deltas_follows_the_index_from_delta_to_delta() -> None:
    # Two blocks open at once (the API streams one at a time, but the accumulator takes both):
    # every delta goes to its own block, and a delta of the wrong type for its block ends the run.
    accumulator = StreamAccumulator()
    accumulator.feed(message_start("msg_1"))
    text = {
        "type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}
    }
    thinking = {
        "type": "content_block_start",
        "index": 1,
        "content_block": {"type": "thinking", "thinking": "", "signature": ""},
    }
    accumulator.feed(text)
    accumulator.feed(thinking)

    def delta(index: int, kind: str, key: str, value: str) -> Event:
        return {"type": "content_block_delta", "index": index, "delta": {"type": kind, key: value}}

    events = [
        delta(0, "text_delta", "text", "a"),
        delta(1, "thinking_delta", "thinking", "x"),
        delta(0, "text_delta", "text", "b"),
        delta(1, "thinking_delta", "thinking", "y"),
        delta(1, "text_delta", "text", "z"),  # a text delta for the thinking block
    ]
    assert accumulator.append_deltas(events, 0) == 4
    accumulator.feed({"type": "content_block_stop", "index": 0})
    done = accumulator.feed({"type": "content_block_stop", "index": 1})
    assert done is not None and done.block["thinking"] == "xy"
    assert accumulator.completed[0].block["text"] == "ab"


def test_a_cut_that_hands_out_nothing_takes_the_whole_batch() -> None:
    # Under claude-code a cut after a complete tool_use lets the running call finish (rule 9b):
    # the cut hands out no command, so the batch goes on and takes (ignores) the rest.
    loop = ToolTurnLoop(TOOLS, model="model-a", profile="claude-code")
    loop.start("go", 0)
    head = TOOL_TURN[:14]  # up to the stop of the Read block
    commands, taken = loop.on_events(head, list(range(len(head))), 1)
    assert taken == len(head)
    assert [type(command) for command in commands] == [StartTool]
    rest = [BROKEN_DELTAS[2], *TOOL_TURN[14:]]  # a delta for the stopped text block: a cut
    assert loop.on_events(rest, list(range(100, 100 + len(rest))), 1) == ([], len(rest))
    assert StreamError in {type(entry) for entry in loop.record.entries}
