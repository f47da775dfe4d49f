"""A chunked response laid out in time: the events exactly as the API sends them, with times.

    message_start                      at ttft
    content_block_start (index 0)      after a block gap (and a tool_use pause for a tool_use)
    ping                               right after the first block starts, as the API does
    content_block_delta ...            each after the tokens generated for it (or a chunk gap)
    content_block_stop                 with the block's last delta
    ... the next blocks ...
    message_delta                      stop_reason and output_tokens, with the last stop
    message_stop

All latency draws of a response come from one stream, in one vectorised call per kind and in a
fixed order (ttft, block gaps, tool_use pauses, token gaps, chunk gaps), then scale by the
endpoint's latency factor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

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


def _delta_events(index: int, block: StreamBlock) -> list[dict[str, Any]]:
    pieces = block.chunks.pieces
    if block.type == "text":
        return [
            {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": p}}
            for p in pieces
        ]
    if block.type == "tool_use":
        return [
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": p},
            }
            for p in pieces
        ]
    events = [
        {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": "thinking_delta", "thinking": p},
        }
        for p in pieces
    ]
    if block.signature:
        events.append(
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "signature_delta", "signature": block.signature},
            }
        )
    return events


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
) -> Timeline:
    """The complete stream of `blocks` (`message` is the message_start's `message` object)."""
    counts = [len(block.chunks.pieces) for block in blocks]
    tokens: list[int] = []
    burst: list[bool] = []
    for block in blocks:
        tokens.extend(block.chunks.tokens)
        burst.extend(block.chunks.burst)
    tool_blocks = np.array([block.type == "tool_use" for block in blocks], dtype=bool)

    ttft = int(_scaled(latency.ttft.sample_many_ns(rng, 1), factor)[0])
    pre_block = _scaled(latency.block_gap.sample_many_ns(rng, len(blocks)), factor)
    pauses = _scaled(latency.tool_use_pause.sample_many_ns(rng, int(tool_blocks.sum())), factor)
    token_array = np.array(tokens, dtype=np.int64)
    token_gaps = _scaled(latency.token_gap.sample_many_ns(rng, int(token_array.sum())), factor)
    burst_array = np.array(burst, dtype=bool)
    chunk_gaps = _scaled(latency.json_chunk_gap.sample_many_ns(rng, int(burst_array.sum())), factor)

    # Generation time elapsed at each piece: the tokens made before it, plus burst chunk gaps.
    token_clock = np.concatenate(([0], np.cumsum(token_gaps)))
    per_piece_chunk_gap = np.zeros(len(tokens), dtype=np.int64)
    per_piece_chunk_gap[burst_array] = chunk_gaps
    generated = token_clock[np.cumsum(token_array)] + np.cumsum(per_piece_chunk_gap)
    # Waits before each block (gap, and a pause for tool_use), cumulative.
    pre_block[tool_blocks] += pauses
    waited = np.cumsum(pre_block)
    piece_block = np.repeat(np.arange(len(blocks)), counts)
    piece_times = (ttft + waited[piece_block] + generated).tolist()
    # A block starts once the previous block's pieces are generated, plus its own wait.
    last_piece = np.cumsum(counts) - 1
    before_block = np.concatenate(([0], last_piece[:-1] + 1)).astype(np.int64)
    generated_before = np.concatenate(([0], generated))[before_block[: len(blocks)]]
    start_times = (ttft + waited + generated_before).tolist()

    times = [ttft]
    events: list[dict[str, Any]] = [{"type": "message_start", "message": message}]
    spans = []
    cursor = 0
    for index, block in enumerate(blocks):
        start_at = start_times[index]
        span_start = len(events)
        times.append(start_at)
        events.append(_start_event(index, block))
        if index == 0:
            times.append(start_at)
            events.append({"type": "ping"})
        count = counts[index]
        events.extend(_delta_events(index, block))
        times.extend(piece_times[cursor : cursor + count])
        cursor += count
        stop_at = times[-1]
        if block.signature:
            times.append(stop_at)
        spans.append(BlockSpan(block.type, span_start, len(events)))
        times.append(stop_at)
        events.append({"type": "content_block_stop", "index": index})
    end = times[-1]
    times.extend((end, end))
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens},
        }
    )
    events.append({"type": "message_stop"})
    return Timeline(times, events, spans, len(events) - 2)
