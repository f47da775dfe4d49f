"""How the API cuts a response into deltas, and how many tokens each delta costs.

A chunked block is a list of payload strings (one `*_delta` each) with, for each, the number of
output tokens generated before it arrives and whether it is the tail of a burst (arrives a small
chunk gap after the previous piece, with no generation in between).

- Text and thinking: a few tokens per delta (1 to `TEXT_TOKENS_PER_DELTA_MAX`). Generated text
  (the model's `generated` script) is words of a small vocabulary: its meaning does not matter to
  the simulator, its length in tokens does. A block is a stretch of a long fixed run of deltas
  (sizes uniform in 1 to the maximum, phrases of those sizes) from a drawn start: one draw per
  block however long it is.
- Tool input JSON, `pairs` (the API's default): an empty first delta, then one burst per top-level
  key/value pair. The model generates the whole pair before any of it is sent (the pause), then
  it arrives as a burst of fragments. The closing brace rides with the last pair.
- Tool input JSON, `fine_grained`: character-level fragments, one token apart.

Joined, the pieces are exactly `json.dumps(input, ensure_ascii=False)`: the API's spacing.
"""

from __future__ import annotations

import bisect
import functools
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from toolturn.randomness import below, below_many

TEXT_TOKENS_PER_DELTA_MAX = 3
# A token of English or JSON is about four characters (the usual rule of thumb for BPE tokenisers).
CHARS_PER_TOKEN = 4
# Fragment sizes within a burst of pairs, and of fine-grained streaming, in characters (uniform;
# a block takes a stretch of a fixed run of them from a drawn start, as generated text does).
BURST_PIECE_CHARS = (4, 32)
FINE_PIECE_CHARS = (1, 7)

_VOCABULARY = (
    "the file function test module error value config path line call return update check "
    "read write change import class method type result output input parse build run fix add "
    "remove first next then so it this that we need to in of and for with from is will should "
    "now let me look at see which where because before after tool search code"
).split()
# Phrases of each size (a row per size, one to TEXT_TOKENS_PER_DELTA_MAX; row 0 is unused), each
# word with its leading space. The table is vocabulary, not a draw: fixed, whatever the seed.
PHRASES_PER_SIZE = 512
# Deltas in the fixed run that generated blocks take their stretches from.
PHRASE_RUN = 1 << 16

_TOKEN = re.compile(r"\s*\S+|\s+")
# json.dumps with any option builds a new encoder per call; one shared encoder is much cheaper.
_ENCODE = json.JSONEncoder(ensure_ascii=False).encode
_ENCODE_STRING = json.encoder.encode_basestring


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


def _phrase_table() -> np.ndarray:
    table = np.full((TEXT_TOKENS_PER_DELTA_MAX + 1, PHRASES_PER_SIZE), "", dtype=object)
    words = np.array([" " + word for word in _VOCABULARY], dtype=object)
    fixed = np.random.default_rng(0)
    for size in range(1, TEXT_TOKENS_PER_DELTA_MAX + 1):
        picks = fixed.integers(0, len(words), size=(PHRASES_PER_SIZE, size))
        table[size] = ["".join(row) for row in words[picks].tolist()]
    return table


_PHRASES = _phrase_table()


def _phrase_run() -> tuple[list[int], list[str], list[int]]:
    """A long fixed run of deltas: their sizes in tokens (1 to TEXT_TOKENS_PER_DELTA_MAX, uniform),
    their phrases, and `ends[i]`, the tokens of the first `i` of them (lists: a block looks up
    a few items, where numpy's per-call cost would outweigh the work)."""
    fixed = np.random.default_rng(1)
    sizes = fixed.integers(1, TEXT_TOKENS_PER_DELTA_MAX + 1, size=PHRASE_RUN)
    pieces = _PHRASES[sizes, fixed.integers(0, PHRASES_PER_SIZE, size=PHRASE_RUN)].tolist()
    return sizes.tolist(), pieces, [0, *np.cumsum(sizes).tolist()]


_RUN_SIZES, _RUN_PIECES, _RUN_ENDS = _phrase_run()
# The phrases as lists, one per size.
_PHRASE_LISTS: list[list[str]] = _PHRASES.tolist()


def generated_chunks(count: int, rng: np.random.Generator) -> Chunks:
    """`count` tokens of generated words, grouped a few per delta: a stretch of the fixed run of
    deltas from a drawn start (one draw per block, and list slices: generated text is most of a
    stream's deltas), its last delta shortened to end on the count."""
    chunks = Chunks()
    while count > 0:
        part = min(count, PHRASE_RUN // 2)
        # Pieces hold at least a token each: `part` pieces from `start` are always enough.
        start = _run_start(rng, part)
        stop = bisect.bisect_left(_RUN_ENDS, _RUN_ENDS[start] + part)
        sizes, pieces = _RUN_SIZES[start:stop], _RUN_PIECES[start:stop]
        over = _RUN_ENDS[stop] - _RUN_ENDS[start] - part
        if over:
            sizes[-1] -= over
            pieces[-1] = _PHRASE_LISTS[sizes[-1]][start % PHRASES_PER_SIZE]
        chunks.pieces += pieces
        chunks.tokens += sizes
        count -= part
    if chunks.pieces:
        chunks.pieces[0] = chunks.pieces[0][1:]  # A block's first word has no space before it.
        chunks.burst = [False] * len(chunks.pieces)
    return chunks


def _run_start(rng: np.random.Generator, count: int) -> int:
    """Where a stretch of `count` items of a fixed run of `PHRASE_RUN` begins."""
    return below(rng, PHRASE_RUN - count)


def _uniform_ints(rng: np.random.Generator, low: int, high: int, n: int) -> np.ndarray:
    """`n` integers uniform in [low, high]."""
    return below_many(rng, high - low + 1, n) + low


def chunk_tokens(tokens: list[str], rng: np.random.Generator) -> Chunks:
    """Given text or thinking tokens grouped a few per delta."""
    total = len(tokens)
    chunks = Chunks()
    if total == 0:
        return chunks
    pieces, counts = chunks.pieces, chunks.tokens
    start = 0
    # One vectorised draw of (more than) enough group sizes; a plain loop beats numpy here.
    for size in _uniform_ints(rng, 1, TEXT_TOKENS_PER_DELTA_MAX, total).tolist():
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
    # Strings (every key, most values) by the encoder's own C function, as it encodes them.
    parts = [
        f"{_ENCODE_STRING(key) if type(key) is str else _ENCODE(key)}: "
        f"{_ENCODE_STRING(value) if type(value) is str else _ENCODE(value)}"
        for key, value in tool_input.items()
    ]
    parts[0] = "{" + parts[0]
    for index in range(1, len(parts)):
        parts[index] = ", " + parts[index]
    parts[-1] += "}"
    return parts


@functools.cache
def _size_run(bounds: tuple[int, int]) -> list[int]:
    """A long fixed run of fragment sizes uniform in `bounds` (inclusive)."""
    sizes: list[int] = (
        np.random.default_rng(bounds).integers(bounds[0], bounds[1] + 1, PHRASE_RUN).tolist()
    )
    return sizes


def _fragment_sizes(rng: np.random.Generator, bounds: tuple[int, int], count: int) -> list[int]:
    """`count` fragment sizes uniform in `bounds`: a stretch of a fixed run from a drawn start
    (one draw and a list slice), or drawn one by one when the run is too short for them."""
    if count > PHRASE_RUN // 2:
        sizes: list[int] = _uniform_ints(rng, bounds[0], bounds[1], count).tolist()
        return sizes
    start = _run_start(rng, count)
    return _size_run(bounds)[start : start + count]


def _fragments(text: str, sizes: Iterator[int]) -> list[str]:
    """`text` cut into pieces of the next sizes from `sizes`, one size taken per piece (an
    iterator shared by the pairs of a burst: no copy of the rest of the list per pair); once the
    sizes run out, the rest of the text is one piece."""
    out: list[str] = []
    start, end = 0, len(text)
    if not end:
        return out
    for size in sizes:  # a for loop over the shared iterator: no call per size
        out.append(text[start : start + size])
        start += size
        if start >= end:
            return out
    out.append(text[start:])
    return out


def chunk_tool_json_pairs(tool_input: dict[str, Any], rng: np.random.Generator) -> Chunks:
    pairs = _pairs(tool_input)
    enough = sum(map(len, pairs)) // BURST_PIECE_CHARS[0] + len(pairs)
    sizes = iter(_fragment_sizes(rng, BURST_PIECE_CHARS, enough))
    # The lists extended a burst at a time (no call per fragment).
    pieces, tokens, burst = [""], [0], [False]
    for pair in pairs:
        fragments = _fragments(pair, sizes)
        tail = len(fragments) - 1
        pieces += fragments
        tokens.append(json_tokens(pair))
        tokens += [0] * tail
        burst.append(False)
        burst += [True] * tail
    return Chunks(pieces, tokens, burst)


def chunk_tool_json_fine(text: str, rng: np.random.Generator) -> Chunks:
    chunks = Chunks()
    chunks.add("", 0)
    sizes = _fragment_sizes(rng, FINE_PIECE_CHARS, len(text) // FINE_PIECE_CHARS[0] + 1)
    for fragment in _fragments(text, iter(sizes)):
        chunks.add(fragment, 1)
    return chunks
