"""Generated text: exactly the planned tokens, a few per delta, words that join into text, the
same for the same generator, and blocks longer than the fixed run of deltas they come from; and
the fragment sizes tool JSON is cut into, taken the same way."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolturn.model.chunking import (
    BURST_PIECE_CHARS,
    PHRASE_RUN,
    TEXT_TOKENS_PER_DELTA_MAX,
    _fragment_sizes,
    generated_chunks,
)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2_000), st.integers(0, 2**32))
def test_a_block_has_exactly_its_tokens_a_few_per_delta(count: int, seed: int) -> None:
    chunks = generated_chunks(count, np.random.default_rng(seed))
    assert sum(chunks.tokens) == count
    assert all(1 <= tokens <= TEXT_TOKENS_PER_DELTA_MAX for tokens in chunks.tokens)
    # A token is a word: each delta holds as many words as it counts tokens.
    assert [len(piece.split()) for piece in chunks.pieces] == chunks.tokens
    text = "".join(chunks.pieces)
    assert not text.startswith(" ") and "  " not in text
    assert chunks.burst == [False] * len(chunks.pieces)


@pytest.mark.parametrize("count", [PHRASE_RUN // 2 + 1, 2 * PHRASE_RUN + 3])
def test_a_block_longer_than_the_run_is_made_of_several_stretches(count: int) -> None:
    chunks = generated_chunks(count, np.random.default_rng(1))
    assert sum(chunks.tokens) == count
    assert len("".join(chunks.pieces).split()) == count


def test_the_same_generator_gives_the_same_text_and_others_differ() -> None:
    first = generated_chunks(300, np.random.default_rng(5))
    assert generated_chunks(300, np.random.default_rng(5)) == first
    assert generated_chunks(300, np.random.default_rng(6)).pieces != first.pieces


def test_delta_sizes_are_spread_evenly() -> None:
    rng = np.random.default_rng(9)
    sizes = [size for _ in range(200) for size in generated_chunks(200, rng).tokens[:-1]]
    counts = np.bincount(sizes, minlength=TEXT_TOKENS_PER_DELTA_MAX + 1)[1:]
    assert counts.min() > 0.9 * len(sizes) / TEXT_TOKENS_PER_DELTA_MAX


@pytest.mark.parametrize("count", [1, 40, PHRASE_RUN // 2, PHRASE_RUN // 2 + 1, PHRASE_RUN])
def test_fragment_sizes_are_as_many_as_asked_within_bounds(count: int) -> None:
    low, high = BURST_PIECE_CHARS
    sizes = _fragment_sizes(np.random.default_rng(count), BURST_PIECE_CHARS, count)
    assert len(sizes) == count and all(low <= size <= high for size in sizes)
    again = _fragment_sizes(np.random.default_rng(count), BURST_PIECE_CHARS, count)
    assert again == sizes


def test_fragment_sizes_cover_their_range_evenly() -> None:
    low, high = BURST_PIECE_CHARS
    rng = np.random.default_rng(2)
    sizes = [size for _ in range(300) for size in _fragment_sizes(rng, BURST_PIECE_CHARS, 100)]
    counts = np.bincount(sizes, minlength=high + 1)[low:]
    assert len(counts) == high - low + 1
    assert counts.min() > 0.8 * len(sizes) / len(counts)
