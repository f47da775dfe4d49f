"""The paired differences of two arms (`toolturn.metrics.paired`) read from a run folder's turns,
their row groups merged in key order: memory holds the differences, not the two arms' turns.

A run folder's turns are in the table's order (`schema.TURNS.sort_key`), so one arm's turns at
one level come by session, then turn, each key once. The two arms' groups are walked side by
side: the keys of both up to the smaller of their last keys are matched, the differences kept,
the rest waits for the next group. The result is `paired.paired_differences`' exactly: the same
pairs (a key under both arms with a value of the column under both), treatment minus baseline,
in key order (the arm column the two share, and the level, are the same on both sides).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import pyarrow as pa

from toolturn.metrics.paired import PAIRED_COLUMNS

# The turn's key within one arm at one level, packed into one int64 (session << 32 | turn).
KEY_COLUMNS = ("session_id", "turn_index")
_TURN_BITS = 32
_MAX_SESSION = 1 << 30
_PAST_EVERY_KEY = np.iinfo(np.int64).max


def merged_differences(
    treatment: Iterable[pa.Table], baseline: Iterable[pa.Table]
) -> dict[str, np.ndarray]:
    """For each of `PAIRED_COLUMNS`, the differences treatment minus baseline of the pairs, in
    key order, from two arms' turns given as groups in key order (with `KEY_COLUMNS` and the
    paired columns)."""
    sides = (_Side(iter(treatment)), _Side(iter(baseline)))
    found: dict[str, list[np.ndarray]] = {column: [] for column in PAIRED_COLUMNS}
    while True:
        for side in sides:
            side.fill()
        if all(side.done for side in sides):
            break
        # Keys up to the smaller of the last keys read are complete on both sides: a later
        # group of either has only larger keys. One side is then emptied, so the walk moves on.
        bound = min(side.last_read() for side in sides)
        (keys, values, valid), (other_keys, other_values, other_valid) = (
            side.take(bound) for side in sides
        )
        _, mine, theirs = np.intersect1d(keys, other_keys, assume_unique=True,
                                         return_indices=True)
        for index, column in enumerate(PAIRED_COLUMNS):
            both = valid[index][mine] & other_valid[index][theirs]
            found[column].append(
                values[index][mine][both] - other_values[index][theirs][both]
            )
    return {
        column: np.concatenate(parts) if parts else np.array([], dtype=np.int64)
        for column, parts in found.items()
    }


class _Side:
    """One arm's turns: the keys, values and validity read but not yet matched."""

    def __init__(self, groups: Iterator[pa.Table]) -> None:
        self._groups = groups
        self.done = False
        self._last: int | None = None
        self._keys = np.array([], dtype=np.int64)
        self._values = [np.array([], dtype=np.int64) for _ in PAIRED_COLUMNS]
        self._valid = [np.array([], dtype=np.bool_) for _ in PAIRED_COLUMNS]

    def fill(self) -> None:
        """Reads groups until some keys wait, or sets `done` when the groups have ended."""
        while not self._keys.size and not self.done:
            group = next(self._groups, None)
            if group is None:
                self.done = True
                return
            keys = _packed(group)
            if not keys.size:
                continue
            if np.any(keys[1:] <= keys[:-1]) or (self._last is not None and keys[0] <= self._last):
                raise ValueError("turns not in the table's order (session_id, turn_index)")
            self._last = int(keys[-1])
            self._keys = keys
            self._values = [
                group[column].fill_null(0).to_numpy().astype(np.int64)
                for column in PAIRED_COLUMNS
            ]
            self._valid = [
                group[column].is_valid().to_numpy(zero_copy_only=False)
                for column in PAIRED_COLUMNS
            ]

    def last_read(self) -> int:
        """The last key read (that may wait), or past every key once the groups have ended."""
        return self._last if not self.done and self._last is not None else _PAST_EVERY_KEY

    def take(self, bound: int) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]:
        """The keys up to `bound`, their values and validity, no longer waiting."""
        cut = int(np.searchsorted(self._keys, bound, side="right"))
        taken = (
            self._keys[:cut],
            [values[:cut] for values in self._values],
            [valid[:cut] for valid in self._valid],
        )
        self._keys = self._keys[cut:]
        self._values = [values[cut:] for values in self._values]
        self._valid = [valid[cut:] for valid in self._valid]
        return taken


def _packed(group: pa.Table) -> np.ndarray:
    sessions = group["session_id"].to_numpy().astype(np.int64)
    turns = group["turn_index"].to_numpy().astype(np.int64)
    if sessions.size and (
        sessions.min() < 0 or sessions.max() >= _MAX_SESSION
        or turns.min() < 0 or turns.max() >= 1 << _TURN_BITS
    ):
        raise ValueError("session_id or turn_index out of the range a key can pack")
    packed: np.ndarray = (sessions << _TURN_BITS) | turns
    return packed
