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
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import accumulate
from typing import Any

import numpy as np

from sim.distributions import sample_short_runs
from sim.model.chunking import Chunks
from sim.model.latency import Latency


@dataclass(slots=True)
class StreamBlock:
    """One content block ready to stream; a thinking block's signature follows its last piece."""

    type: str  # "text" | "thinking" | "tool_use"
    chunks: Chunks
    tool_id: str = ""
    name: str = ""
    signature: str = ""


@dataclass(slots=True)
class BlockSpan:
    """Where a block's events sit in the timeline: its start and stop event indices."""

    type: str
    start: int
    stop: int


@dataclass(slots=True)
class Timeline:
    times: list[int]
    events: list[dict[str, Any]]
    spans: list[BlockSpan]
    message_delta: int  # index of the message_delta event


def _start_event(index: int, block: StreamBlock) -> dict[str, Any]:
    if block.type == "text":
        content: dict[str, Any] = {"type": "text", "text": ""}
    elif block.type == "thinking":
        content = {"type": "thinking", "thinking": "", "signature": ""}
    else:
        content = {"type": "tool_use", "id": block.tool_id, "name": block.name, "input": {}}
    return {"type": "content_block_start", "index": index, "content_block": content}


# Delta type and its payload key, per block type.
_DELTA_KINDS = {
    "text": ("text_delta", "text"),
    "thinking": ("thinking_delta", "thinking"),
    "tool_use": ("input_json_delta", "partial_json"),
}


# Text and thinking deltas, one per distinct text: generated text is phrases of a small
# vocabulary, so its deltas repeat, and each is made once and shared by every event carrying it
# (nothing changes an event once made: the runtime, the server and the trace only read them).
_TEXT_DELTAS: dict[str, dict[str, dict[str, str]]] = {"text_delta": {}, "thinking_delta": {}}
# Distinct texts remembered per kind (a scripted text brings its own; only the speed depends on it).
_SHARED_DELTAS_KEPT = 1 << 16


def _shared_deltas(kind: str, field: str, pieces: list[str]) -> list[dict[str, str]]:
    """The delta of each piece: the one made before for the same text, or a new one."""
    known = _TEXT_DELTAS[kind]
    if len(known) >= _SHARED_DELTAS_KEPT:
        known.clear()
    return [
        known.get(piece) or known.setdefault(piece, {"type": kind, field: piece})
        for piece in pieces
    ]


def _scaled(draws: np.ndarray, factor: float) -> np.ndarray:
    if factor == 1.0:
        return draws
    return np.rint(draws * factor).astype(np.int64)


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
    total_tokens = sum(sum(block.chunks.tokens) for block in blocks)
    total_bursts = sum(sum(block.chunks.burst) for block in blocks)
    tools = sum(block.type == "tool_use" for block in blocks)
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
    # token_clock[k]: time to generate the first k tokens; one pass instead of a sum per piece.
    token_clock = np.cumsum(token_gaps).tolist()
    token_clock.insert(0, 0)
    chunk_gaps = iter(
        _scaled(latency.json_chunk_gap.sample_many_ns(rng, total_bursts), factor).tolist()
        if total_bursts
        else ()
    )

    # One pass: the clock advances by each block's wait, each piece's tokens, each burst gap.
    now = origin_ns + ttft
    made = 0  # tokens generated so far
    times = [now]
    events: list[dict[str, Any]] = [{"type": "message_start", "message": message}]
    spans = []
    for index, (block, wait) in enumerate(zip(blocks, waits, strict=True)):
        now += wait
        span_start = len(events)
        times.append(now)
        events.append(_start_event(index, block))
        if index == 0:
            times.append(now)
            events.append({"type": "ping"})
        kind, field = _DELTA_KINDS[block.type]
        chunks = block.chunks
        if chunks.pieces:
            # Comprehensions rather than one loop with appends: this is the hot path.
            base = now - token_clock[made]
            made_by = list(accumulate(chunks.tokens, initial=made))[1:]
            if block.type == "tool_use" and any(chunks.burst):
                gaps = accumulate(next(chunk_gaps) if burst else 0 for burst in chunks.burst)
                piece_times = [
                    base + token_clock[k] + g for k, g in zip(made_by, gaps, strict=True)
                ]
            else:
                piece_times = [base + token_clock[k] for k in made_by]
            made = made_by[-1]
            now = piece_times[-1]
            times.extend(piece_times)
            if block.type == "tool_use":
                deltas = [{"type": kind, field: piece} for piece in chunks.pieces]
            else:
                deltas = _shared_deltas(kind, field, chunks.pieces)
            events += [
                {"type": "content_block_delta", "index": index, "delta": delta} for delta in deltas
            ]
        if block.signature:
            times.append(now)
            events.append(
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "signature_delta", "signature": block.signature},
                }
            )
        spans.append(BlockSpan(block.type, span_start, len(events)))
        times.append(now)
        events.append({"type": "content_block_stop", "index": index})
    times.extend((now, now))
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens},
        }
    )
    events.append({"type": "message_stop"})
    return Timeline(times, events, spans, len(events) - 2)
