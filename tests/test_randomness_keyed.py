"""`sim.randomness.stream` gives exactly numpy's `PCG64(SeedSequence(root, spawn_key=keys))` for
any root seed and keys (the committed baselines and goldens depend on it); keys name independent
streams."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.randomness import _key_to_int, stream

KEYS = st.lists(
    st.one_of(st.text(max_size=12), st.integers(0, 2**8), st.integers(0, 2**70)), max_size=5
)
ROOTS = st.one_of(st.integers(0, 2**32), st.integers(0, 2**160))


def numpy_stream(root_seed: int, *keys: str | int) -> np.random.Generator:
    sequence = np.random.SeedSequence(entropy=root_seed, spawn_key=tuple(map(_key_to_int, keys)))
    return np.random.Generator(np.random.PCG64(sequence))


@settings(max_examples=300, deadline=None)
@given(ROOTS, KEYS)
def test_the_same_generator_as_numpys_seed_sequence(root_seed: int, keys: list[str | int]) -> None:
    ours, theirs = stream(root_seed, *keys), numpy_stream(root_seed, *keys)
    assert ours.bit_generator.state == theirs.bit_generator.state
    assert ours.random(3).tolist() == theirs.random(3).tolist()


def test_keys_name_streams_not_their_order_of_creation() -> None:
    first = stream(7, "latency", 3, 1).random(4).tolist()
    stream(7, "latency", 3, 2)
    assert stream(7, "latency", 3, 1).random(4).tolist() == first
    assert stream(7, "latency", 3, 2).random(4).tolist() != first
    assert stream(8, "latency", 3, 1).random(4).tolist() != first


def test_a_negative_key_is_refused() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        stream(1, "tool", -1)
