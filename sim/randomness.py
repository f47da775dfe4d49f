"""Independent, reproducible random streams keyed by what they are for.

One root seed feeds every concern. A stream is named by keys (the concern, the session, the turn,
the call), not by the order in which streams are asked for, so a draw for "latency of session 7,
turn 3" is the same whatever happened elsewhere. That is what makes policy comparisons use common
random numbers: two policies that reach the same turn get the same draws for it.

The generator of keys `(k1, k2, ...)` is numpy's PCG64 seeded by
`SeedSequence(entropy=root_seed, spawn_key=(k1, k2, ...))`, a string key hashed to 64 bits.
"""

from __future__ import annotations

import functools
import hashlib

import numpy as np


@functools.lru_cache(maxsize=4096)
def _key_to_int(key: str | int) -> int:
    if isinstance(key, int):
        if key < 0:
            raise ValueError(f"random stream keys must be non-negative, got {key}")
        return key
    # A stable hash: Python's hash() of a str changes between processes. Remembered because the
    # same few concern names key thousands of streams.
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")


def stream(root_seed: int, *keys: str | int) -> np.random.Generator:
    """The generator for the concern named by `keys` under `root_seed`."""
    sequence = np.random.SeedSequence(entropy=root_seed, spawn_key=tuple(map(_key_to_int, keys)))
    return np.random.Generator(np.random.PCG64(sequence))
