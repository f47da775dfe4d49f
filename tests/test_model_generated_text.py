"""Generated text: exactly the planned tokens, a few per delta, words that join into text, the
same for the same generator, and blocks longer than the fixed run of deltas they come from."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.model.chunking import PHRASE_RUN, TEXT_TOKENS_PER_DELTA_MAX, generated_chunks


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
