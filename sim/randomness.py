"""Independent, reproducible random streams keyed by what they are for.

One root seed feeds every concern. A stream is named by keys (the concern, the session, the turn,
the call), not by the order in which streams are asked for, so a draw for "latency of session 7,
turn 3" is the same whatever happened elsewhere. That is what makes policy comparisons use common
random numbers: two policies that reach the same turn get the same draws for it.

The generator of keys `(k1, k2, ...)` is numpy's PCG64 seeded by
`SeedSequence(entropy=root_seed, spawn_key=(k1, k2, ...))` (a string key hashed to 64 bits).
Why it is not built that way: the simulator makes thousands of streams (two per model response,
one per tool call, ...) and numpy's SeedSequence costs ~12 us a stream, more than the draws of a
simulated turn. `_KeyedSeed` computes the same seed words with SeedSequence's own hash, in plain
integers, and remembers the hashing of the root seed and the first key (the concern, shared by
thousands of streams), so a stream costs the hashing of its last few keys. Its output is checked
against numpy's SeedSequence in the tests: the draws are exactly the same.
"""

from __future__ import annotations

import functools
import hashlib

import numpy as np
from numpy.random.bit_generator import ISeedSequence

# numpy's SeedSequence (numpy/random/bit_generator.pyx): pool size, hash and mix constants.
_POOL_SIZE = 4
_MASK32 = 0xFFFF_FFFF
_INIT_A = 0x43B0D7E5
_MULT_A = 0x931E8875
_INIT_B = 0x8B51F9DD
_MULT_B = 0x58F38DED
_MIX_MULT_L = 0xCA01F9DD
_MIX_MULT_R = 0x4973F715
_XSHIFT = 16


@functools.lru_cache(maxsize=4096)
def _key_to_int(key: str | int) -> int:
    if isinstance(key, int):
        if key < 0:
            raise ValueError(f"random stream keys must be non-negative, got {key}")
        return key
    # A stable hash: Python's hash() of a str changes between processes.
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")


def _words32(value: int) -> list[int]:
    """`value` as little-endian 32-bit words, as SeedSequence reads an integer ([0] for 0)."""
    if value == 0:
        return [0]
    words = []
    while value:
        words.append(value & _MASK32)
        value >>= 32
    return words


def _hash_constants(first: int, multiplier: int, count: int) -> tuple[int, ...]:
    """SeedSequence's hash constant at each hashing step: `first`, then times `multiplier`."""
    constants = [first]
    for _ in range(count):
        constants.append((constants[-1] * multiplier) & _MASK32)
    return tuple(constants)


# Hashing step n uses _MIXING[n] and _MIXING[n + 1]; a pool of 4 takes 16 steps, then 4 a word.
_MIXING = _hash_constants(_INIT_A, _MULT_A, 16 + 4 * 64)
_OUTPUT = _hash_constants(_INIT_B, _MULT_B, 8)
# (pool index, constant, next constant) of each 32-bit output word: PCG64 takes 4 uint64.
_OUTPUT_STEPS = tuple((n % _POOL_SIZE, _OUTPUT[n], _OUTPUT[n + 1]) for n in range(8))

Pool = tuple[tuple[int, ...], int]  # the pool words, and the hashing steps taken


def _hash(word: int, step: int) -> int:
    constants = _MIXING if step + 1 < len(_MIXING) else _hash_constants(_INIT_A, _MULT_A, step + 1)
    value = ((word ^ constants[step]) * constants[step + 1]) & _MASK32
    return value ^ (value >> _XSHIFT)


def _mix(pool_word: int, hashed: int) -> int:
    mixed = (_MIX_MULT_L * pool_word - _MIX_MULT_R * hashed) & _MASK32
    return mixed ^ (mixed >> _XSHIFT)


def _absorb(pool: Pool, value: int) -> Pool:
    """`pool` with each 32-bit word of `value` mixed into every pool word."""
    mixer, step = list(pool[0]), pool[1]
    words = _words32(value)
    constants = _MIXING
    if step + _POOL_SIZE * len(words) >= len(constants):
        constants = _hash_constants(_INIT_A, _MULT_A, step + _POOL_SIZE * len(words))
    # `_mix(mixer[i], _hash(word, step))` inlined, constants in locals: this runs for every key
    # of every stream.
    mask, left, right = _MASK32, _MIX_MULT_L, _MIX_MULT_R
    for word in words:
        for index in (0, 1, 2, 3):
            hashed = ((word ^ constants[step]) * constants[step + 1]) & mask
            step += 1
            mixed = (left * mixer[index] - right * (hashed ^ (hashed >> 16))) & mask
            mixer[index] = mixed ^ (mixed >> 16)
    return tuple(mixer), step


@functools.lru_cache(maxsize=4096)
def _pool_after(root_seed: int, keys: tuple[int, ...]) -> Pool:
    """The pool once the root seed (padded to the pool size, as SeedSequence does when there
    are spawn keys) and `keys` are mixed in. Remembered: streams share their leading keys (the
    concern, the session), so a new stream mostly hashes its last key alone."""
    if keys:
        return _absorb(_pool_after(root_seed, keys[:-1]), keys[-1])
    entropy = _words32(root_seed)
    entropy += [0] * (_POOL_SIZE - len(entropy))
    mixer = [_hash(word, step) for step, word in enumerate(entropy[:_POOL_SIZE])]
    step = _POOL_SIZE
    for source in range(_POOL_SIZE):
        for target in range(_POOL_SIZE):
            if source != target:
                mixer[target] = _mix(mixer[target], _hash(mixer[source], step))
                step += 1
    pool: Pool = tuple(mixer), step
    for word in entropy[_POOL_SIZE:]:
        pool = _absorb(pool, word)
    return pool


class _KeyedSeed(ISeedSequence):
    """The seed words `SeedSequence(entropy=root_seed, spawn_key=keys)` would give (keys not
    empty), for a bit generator."""

    __slots__ = ("_pool",)

    def __init__(self, root_seed: int, keys: tuple[int, ...]) -> None:
        self._pool = _absorb(_pool_after(root_seed, keys[:-1]), keys[-1])[0]

    def generate_state(self, n_words: int, dtype: type = np.uint32) -> np.ndarray:
        pool, mask, steps = self._pool, _MASK32, _OUTPUT_STEPS
        if n_words == 4 and dtype is np.uint64:  # what PCG64 asks for, once per stream
            # The eight 32-bit words paired into 64-bit ones (little-endian) in plain integers:
            # one small array instead of a uint32 array and a view, half the cost.
            mixed = [((pool[i] ^ constant) * following) & mask for i, constant, following in steps]
            words = [word ^ (word >> _XSHIFT) for word in mixed]
            pairs = zip(words[::2], words[1::2], strict=True)
            return np.array([low | high << 32 for low, high in pairs], dtype=np.uint64)
        count = n_words * np.dtype(dtype).itemsize // 4
        output = _hash_constants(_INIT_B, _MULT_B, count)
        steps = tuple((n % _POOL_SIZE, output[n], output[n + 1]) for n in range(count))
        words = [((pool[i] ^ constant) * following) & mask for i, constant, following in steps]
        state = np.array([word ^ (word >> _XSHIFT) for word in words], dtype=np.uint32)
        return state.view(dtype)


def stream(root_seed: int, *keys: str | int) -> np.random.Generator:
    """The generator for the concern named by `keys` under `root_seed`."""
    spawn_key = tuple(map(_key_to_int, keys))
    if not spawn_key or root_seed < 0:
        # SeedSequence pads the root seed only when there are keys (and rejects a negative one).
        sequence = np.random.SeedSequence(entropy=root_seed, spawn_key=spawn_key)
        return np.random.Generator(np.random.PCG64(sequence))
    return np.random.Generator(np.random.PCG64(_KeyedSeed(root_seed, spawn_key)))
