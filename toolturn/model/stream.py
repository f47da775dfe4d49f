"""A chunked response laid out in time: the events exactly as the API sends them, with times.

    message_start                      at ttft
    content_block_start (index 0)      after a block gap (and a tool_use pause for a tool_use)
    ping                               right after the first block starts, as the API does
    content_block_delta ...            each after the tokens generated for it (or a chunk gap)
    content_block_stop                 with the block's last delta
    ... the next blocks ...
    message_delta                      stop_reason and output_tokens, with the last stop
    message_stop

All latency draws of a response come from the response's stream (after its content draws), in a
fixed order (ttft, block gaps, tool_use pauses, token gaps, chunk gaps; the first three, a few
values, by `sample_short_runs`, the others in a numpy call each), then scale by the endpoint's
latency factor.

Events whose content does not vary are made once and shared by every stream that sends them
(`toolturn.model.shared_events`): nothing changes an event once made (the runtime, the server, the
probe and the trace only read them, or copy before they edit;
`tests/model/test_model_shared_events.py` proves it for runs of every policy and profile).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import accumulate
from typing import Any

import numpy as np

from toolturn.distributions import NS_PER_MS, Distribution, Uniform, sample_short_runs
from toolturn.model.chunking import Chunks
from toolturn.model.latency import Latency
from toolturn.model.shared_events import (
    MESSAGE_STOP,
    PING,
    block_start,
    block_stop,
    text_deltas,
    tool_json_deltas,
)


@dataclass(slots=True)
class StreamBlock:
    """One content block ready to stream; a thinking block's signature follows its last piece.
    Once laid out in a timeline, `start` and `stop` are the indices of its content_block_start
    and content_block_stop events (set there: no object per block for where it sits)."""

    type: str  # "text" | "thinking" | "tool_use"
    chunks: Chunks
    tool_id: str = ""
    name: str = ""
    signature: str = ""
    start: int = 0
    stop: int = 0


@dataclass(slots=True)
class Timeline:
    times: list[int]
    events: list[dict[str, Any]]
    spans: list[StreamBlock]  # the blocks laid out, each with its `start` and `stop`
    message_delta: int  # index of the message_delta event


@dataclass(slots=True)
class _Clock:
    """The latency draws of one response, and how far its generation has got."""

    waits: list[int]  # before each block: its gap, and a tool_use's pause
    token_clock: list[int]  # token_clock[k]: time to generate the first k tokens
    chunk_gaps: Any  # an iterator of the burst tails' gaps, in order
    now: int
    made: int = 0  # tokens generated so far


def _scaled(draws: np.ndarray, factor: float) -> np.ndarray:
    if factor == 1.0:
        return draws
    return np.rint(draws * factor).astype(np.int64)


def _draw_clock(
    blocks: list[StreamBlock], latency: Latency, rng: np.random.Generator, factor: float,
    origin_ns: int,
) -> _Clock:
    """Every latency draw of the response, in the order of the module's docstring."""
    total_tokens = total_bursts = tools = 0
    for block in blocks:  # one pass, no generator per count
        total_tokens += sum(block.chunks.tokens)
        if block.type == "tool_use":
            tools += 1
            total_bursts += sum(block.chunks.burst)
    (ttft,), block_gaps, pauses = sample_short_runs(
        rng,
        ((latency.ttft, 1), (latency.block_gap, len(blocks)), (latency.tool_use_pause, tools)),
    )
    if factor != 1.0:  # rounded as `_scaled` rounds (halves to even)
        ttft = round(ttft * factor)
        block_gaps = [round(gap * factor) for gap in block_gaps]
        pauses = [round(pause * factor) for pause in pauses]
    # A tool_use block waits for its pause as well as its gap.
    next_pause = iter(pauses).__next__
    waits = [
        gap + next_pause() if block.type == "tool_use" else gap
        for block, gap in zip(blocks, block_gaps, strict=True)
    ]
    token_gaps = _scaled(latency.token_gap.sample_many_ns(rng, total_tokens), factor)
    # One pass instead of a sum per piece (the method: np.cumsum is two Python calls more).
    token_clock = token_gaps.cumsum().tolist()
    token_clock.insert(0, 0)
    chunk_gaps = iter(_chunk_gaps(latency.json_chunk_gap, rng, total_bursts, factor))
    return _Clock(waits, token_clock, chunk_gaps, origin_ns + ttft)


def _chunk_gaps(
    distribution: Distribution, rng: np.random.Generator, count: int, factor: float
) -> list[int]:
    """`count` gaps of the bursts' tails, scaled. A response has a few: for a uniform gap (the
    presets'), its uniform draws in one call and the arithmetic in Python, the same operations
    as numpy's `uniform` (low + range x draw) and `_rounded_ns` (halves to even), so the same
    integers; numpy's per-call cost outweighs the work for so few."""
    if not count:
        return []
    if type(distribution) is not Uniform or factor != 1.0:
        gaps: list[int] = _scaled(distribution.sample_many_ns(rng, count), factor).tolist()
        return gaps
    low, span = distribution.low_ms, distribution.high_ms - distribution.low_ms
    return [round((low + span * draw) * NS_PER_MS) for draw in rng.random(count).tolist()]


def _piece_times(clock: _Clock, chunks: Chunks, tool_use: bool) -> list[int]:
    """When each piece of a block arrives: after its tokens, and a burst tail after its gap;
    the clock moves to the last piece."""
    token_clock = clock.token_clock
    # Comprehensions rather than one loop with appends: this is the hot path.
    base = clock.now - token_clock[clock.made]
    made_by = list(accumulate(chunks.tokens, initial=clock.made))
    del made_by[0]
    if tool_use and any(chunks.burst):
        chunk_gaps = clock.chunk_gaps
        gaps = accumulate([next(chunk_gaps) if burst else 0 for burst in chunks.burst])
        times = [base + token_clock[k] + g for k, g in zip(made_by, gaps, strict=True)]
    else:
        times = [base + token_clock[k] for k in made_by]
    clock.made = made_by[-1]
    clock.now = times[-1]
    return times


def _lay_out_block(
    index: int, block: StreamBlock, clock: _Clock, times: list[int], events: list[dict[str, Any]]
) -> StreamBlock:
    """Append block `index`'s events and their times; the block, with where they sit."""
    now = clock.now = clock.now + clock.waits[index]
    block.start = len(events)
    times.append(now)
    events.append(block_start(index, block.type, block.tool_id, block.name))
    if index == 0:
        times.append(now)
        events.append(PING)
    chunks = block.chunks
    if chunks.pieces:
        tool_use = block.type == "tool_use"
        times += _piece_times(clock, chunks, tool_use)
        if tool_use:
            events += tool_json_deltas(index, chunks.pieces)
        else:
            events += text_deltas(block.type, index, chunks.pieces)
    if block.signature:
        times.append(clock.now)
        events.append(
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "signature_delta", "signature": block.signature},
            }
        )
    block.stop = len(events)
    times.append(clock.now)
    events.append(block_stop(index))
    return block


def build_timeline(
    message: dict[str, Any],
    blocks: list[StreamBlock],
    stop_reason: str,
    output_tokens: int,
    latency: Latency,
    rng: np.random.Generator,
    factor: float = 1.0,
    origin_ns: int = 0,
) -> Timeline:
    """The complete stream of `blocks` (`message` is the message_start's `message` object), its
    times counted from `origin_ns`."""
    clock = _draw_clock(blocks, latency, rng, factor, origin_ns)
    # One pass: the clock advances by each block's wait, each piece's tokens, each burst gap.
    times = [clock.now]
    events: list[dict[str, Any]] = [{"type": "message_start", "message": message}]
    spans = [
        _lay_out_block(index, block, clock, times, events) for index, block in enumerate(blocks)
    ]
    times.extend((clock.now, clock.now))
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens},
        }
    )
    events.append(MESSAGE_STOP)
    return Timeline(times, events, spans, len(events) - 2)
