"""Independent, reproducible random streams keyed by what they are for.

One root seed feeds every concern. A stream is named by keys (the concern, the session, the turn,
the call), not by the order in which streams are asked for, so a draw for "latency of session 7,
turn 3" is the same whatever happened elsewhere. That is what makes policy comparisons use common
random numbers: two policies that reach the same turn get the same draws for it.

The generator of keys `(k1, k2, ...)` is numpy's PCG64 whose 256 bits of seed state are the
BLAKE2b digest of the root seed and the keys. This replaces `SeedSequence(root_seed,
spawn_key=keys)`, which gives streams of the same quality but costs about 14 us to make against
about 2 us here: the simulator makes several streams per simulated request (latency, content,
each tool call, each turn's attachments), and making them was a fifth of its wall time.
"""

from __future__ import annotations

import hashlib
import sys
from typing import Any

import numpy as np
from numpy.random.bit_generator import ISeedSequence

_DIGEST_BYTES = 32
# The digest's words are read little-endian on every machine, so a seed gives the same draws
# everywhere.
_LITTLE_ENDIAN = sys.byteorder == "little"


class _Digest(ISeedSequence):
    """A seed sequence that is a fixed string of bytes (numpy's documented interface for seeding
    a bit generator from anything other than its own `SeedSequence`)."""

    __slots__ = ("_digest",)

    def __init__(self, digest: bytes) -> None:
        self._digest = digest

    def generate_state(self, n_words: int, dtype: Any = np.uint32) -> np.ndarray:
        # numpy refuses to read more words than the digest holds. Positional arguments and a
        # dtype made once: numpy parses keywords, and converts a type, on every call.
        kind = _DTYPES.get(dtype)
        if kind is None:
            kind = _DTYPES[dtype] = np.dtype(dtype)
        words = np.frombuffer(self._digest, kind, n_words)
        return words if _LITTLE_ENDIAN else words.byteswap()


# `generate_state`'s dtypes by what it was given (PCG64 asks for np.uint64 every time).
_DTYPES: dict[Any, np.dtype] = {}


def _key_text(key: str | int) -> str:
    # Tagged, so the string "7" and the integer 7 name different streams; repr escapes the
    # separator inside a string key.
    if isinstance(key, int):
        if key < 0:
            raise ValueError(f"random stream keys must be non-negative, got {key}")
        return f"i{key}"
    return f"s{key!r}"


def below(rng: np.random.Generator, n: int) -> int:
    """An integer uniform in [0, n) from one uniform draw: a third of `Generator.integers`'s
    cost for one value, and the simulator draws one per pick (a tool's example, a count from a
    list, a word). The bias of scaling a 53-bit fraction is far below anything measured here."""
    return min(int(rng.random() * n), n - 1)


def below_many(rng: np.random.Generator, n: int, count: int) -> np.ndarray:
    """`count` integers uniform in [0, n), as `below` draws them one at a time (the same values
    from the same generator); `Generator.integers` with a size costs twice as much for the few
    dozen values a block of a stream needs."""
    return np.minimum((rng.random(count) * n).astype(np.int64), n - 1)


def stream(root_seed: int, *keys: str | int) -> np.random.Generator:
    """The generator for the concern named by `keys` under `root_seed`."""
    # Integer keys (most) tagged inline: a call per key cost more than the rest of the text.
    tagged = [f"i{key}" if type(key) is int and key >= 0 else _key_text(key) for key in keys]
    text = "\x1f".join([str(root_seed), *tagged])
    return _generator(hashlib.blake2b(text.encode(), digest_size=_DIGEST_BYTES))


class StreamPrefix:
    """The first keys of many streams, hashed once: `prefix.stream(*more)` is
    `stream(root_seed, *keys, *more)`, without joining and hashing the first keys again (a
    session's tool calls are `stream(seed, "tool", session, tool_use_id)`)."""

    __slots__ = ("_hash",)

    def __init__(self, root_seed: int, *keys: str | int) -> None:
        text = "\x1f".join([str(root_seed), *map(_key_text, keys)])
        self._hash = hashlib.blake2b(text.encode(), digest_size=_DIGEST_BYTES)

    def stream(self, *keys: str | int) -> np.random.Generator:
        keyed = self._hash.copy()
        keyed.update("".join(["\x1f" + _key_text(key) for key in keys]).encode())
        return _generator(keyed)


def _generator(keyed: Any) -> np.random.Generator:
    # numpy's stubs accept only SeedSequence here, not the documented ISeedSequence of _Digest.
    return np.random.Generator(np.random.PCG64(_Digest(keyed.digest())))  # type: ignore[arg-type]
