"""How the API cuts a response into deltas, and how many tokens each delta costs.

A chunked block is a list of payload strings (one `*_delta` each) with, for each, the number of
output tokens generated before it arrives and whether it is the tail of a burst (arrives a small
chunk gap after the previous piece, with no generation in between).

- Text and thinking: a few tokens per delta (1 to `TEXT_TOKENS_PER_DELTA_MAX`).
- Tool input JSON, `pairs` (the API's default): an empty first delta, then one burst per top-level
  key/value pair. The model generates the whole pair before any of it is sent (the pause), then
  it arrives as a burst of fragments. The closing brace rides with the last pair.
- Tool input JSON, `fine_grained`: character-level fragments, one token apart.

Joined, the pieces are exactly `json.dumps(input, ensure_ascii=False)`: the API's spacing.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

TEXT_TOKENS_PER_DELTA_MAX = 3
# A token of English or JSON is about four characters (the usual rule of thumb for BPE tokenisers).
CHARS_PER_TOKEN = 4
# Fragment sizes within a burst of pairs, and of fine-grained streaming, in characters.
BURST_PIECE_CHARS = (4, 32)
FINE_PIECE_CHARS = (1, 7)

_TOKEN = re.compile(r"\s*\S+|\s+")
# json.dumps with any option builds a new encoder per call; one shared encoder is much cheaper.
_ENCODE = json.JSONEncoder(ensure_ascii=False).encode


@dataclass(slots=True)
class Chunks:
    """The deltas of one block: payloads, tokens generated before each, burst-tail flags."""

    pieces: list[str] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    burst: list[bool] = field(default_factory=list)

    def add(self, piece: str, tokens: int, burst: bool = False) -> None:
        self.pieces.append(piece)
        self.tokens.append(tokens)
        self.burst.append(burst)

    def truncated(self, count: int) -> Chunks:
        """The first `count` pieces."""
        return Chunks(self.pieces[:count], self.tokens[:count], self.burst[:count])


def json_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def split_tokens(text: str) -> list[str]:
    """`text` as word-sized tokens (leading whitespace attached); they join back to `text`."""
    return _TOKEN.findall(text)


def chunk_tokens(tokens: list[str], rng: np.random.Generator) -> Chunks:
    """Text or thinking tokens grouped a few per delta."""
    total = len(tokens)
    chunks = Chunks()
    if total == 0:
        return chunks
    pieces, counts = chunks.pieces, chunks.tokens
    start = 0
    # One vectorised draw of (more than) enough group sizes; a plain loop beats numpy here.
    for size in rng.integers(1, TEXT_TOKENS_PER_DELTA_MAX + 1, size=total).tolist():
        end = start + size
        if end >= total:
            pieces.append("".join(tokens[start:]))
            counts.append(total - start)
            break
        pieces.append("".join(tokens[start:end]))
        counts.append(size)
        start = end
    chunks.burst = [False] * len(pieces)
    return chunks


def tool_json(tool_input: dict[str, Any]) -> str:
    """The input as the API streams it: default separators, non-ASCII unescaped."""
    return _ENCODE(tool_input)


def _pairs(tool_input: dict[str, Any]) -> list[str]:
    """The JSON text split at top-level pairs; the parts join to `tool_json(tool_input)`."""
    if not tool_input:
        return ["{}"]
    parts = [
        f"{_ENCODE(key)}: {_ENCODE(value)}"
        for key, value in tool_input.items()
    ]
    parts[0] = "{" + parts[0]
    for index in range(1, len(parts)):
        parts[index] = ", " + parts[index]
    parts[-1] += "}"
    return parts


def _fragments(text: str, sizes: Iterator[int]) -> list[str]:
    """`text` cut into pieces of the next sizes from `sizes`, one size taken per piece (an
    iterator shared by the pairs of a burst: no copy of the rest of the list per pair); once the
    sizes run out, the rest of the text is one piece."""
    out = []
    start, end = 0, len(text)
    while start < end:
        size = next(sizes, None)
        if size is None:
            out.append(text[start:])
            break
        out.append(text[start : start + size])
        start += size
    return out


def chunk_tool_json_pairs(tool_input: dict[str, Any], rng: np.random.Generator) -> Chunks:
    chunks = Chunks()
    chunks.add("", 0)
    pairs = _pairs(tool_input)
    low, high = BURST_PIECE_CHARS
    sizes = iter(
        rng.integers(low, high + 1, size=sum(map(len, pairs)) // low + len(pairs)).tolist()
    )
    for pair in pairs:
        fragments = _fragments(pair, sizes)
        chunks.add(fragments[0], json_tokens(pair))
        for fragment in fragments[1:]:
            chunks.add(fragment, 0, burst=True)
    return chunks


def chunk_tool_json_fine(text: str, rng: np.random.Generator) -> Chunks:
    chunks = Chunks()
    chunks.add("", 0)
    low, high = FINE_PIECE_CHARS
    sizes = rng.integers(low, high + 1, size=len(text) // low + 1).tolist()
    for fragment in _fragments(text, iter(sizes)):
        chunks.add(fragment, 1)
    return chunks
