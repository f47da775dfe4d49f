"""Paired differences: the same (session, turn) under two arms of a run, subtracted turn by turn.

Every arm of a run (each executor policy; later each recovery profile) runs on common random
numbers, so session ``s``'s turn ``t`` has the same prompts, model script and tool draws under
each. Subtracting the baseline's value from the treatment's for each such turn removes the
variation between turns, which dwarfs the effect in a side-by-side of percentiles.

Rules:

1. A pair is one key (``load_level``, ``session_id``, ``turn_index``, and every other arm column
   held equal) present under both arms with a non-null value of the column under both. Turns one
   arm has and the other lacks (an interrupt at a different moment, the horizon) are not paired;
   ``pairs`` says how many were.
2. The difference is treatment minus baseline, in integer nanoseconds: negative means the
   treatment was sooner. ``gained`` is the share of pairs with a negative difference.
3. ``median`` and ``p90`` use the project's percentile method (``toolturn.metrics.percentiles``: a
   difference some pair really has); ``mean`` is the arithmetic mean over the pairs, sorted by
   key first so the float sum is the same bytes whatever order the rows came in.
4. Confidence intervals are 95%. The median's is distribution-free, by order statistics: the
   ``j``-th and ``k``-th smallest differences, ``j = floor((n - 1.96 sqrt(n)) / 2)`` and
   ``k = ceil(1 + (n + 1.96 sqrt(n)) / 2)``, clipped to ``1..n`` (the normal approximation to
   the sign test's binomial; conservative for small n, where it widens to the extremes). The
   mean's is ``mean ± 1.96 s / sqrt(n)`` (normal approximation; ``s`` with ``n - 1`` degrees of
   freedom). They need at least two pairs and are left out below that.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from toolturn.metrics.percentiles import percentiles
from toolturn.metrics.schema import ARM_COLUMNS

Z_95 = 1.959963984540054
# The turn columns paired, each with the name people read.
PAIRED_COLUMNS: tuple[str, ...] = ("ttfts_ns", "latency_ns")
# The statistics of one paired column, in order, with their units ("ns" or a plain share).
STATISTICS: tuple[tuple[str, str], ...] = (
    ("median", "ns"),
    ("p90", "ns"),
    ("mean", "ns"),
    ("median_ci_low", "ns"),
    ("median_ci_high", "ns"),
    ("mean_ci_low", "ns"),
    ("mean_ci_high", "ns"),
    ("gained", "share"),
    ("pairs", "pairs"),
)
# The key of a turn within one arm, besides the arm columns (rule 1).
TURN_KEY: tuple[str, ...] = ("load_level", "session_id", "turn_index")


@dataclass(frozen=True)
class PairedStats:
    """The statistics of one column's paired differences (rule 2 to 4); None where undefined."""

    pairs: int
    median: float | None
    p90: float | None
    mean: float | None
    median_ci: tuple[float, float] | None
    mean_ci: tuple[float, float] | None
    gained: float | None

    def as_dict(self) -> dict[str, float]:
        """The defined statistics by name (``STATISTICS``)."""
        values: dict[str, float | None] = {
            "median": self.median,
            "p90": self.p90,
            "mean": self.mean,
            "median_ci_low": self.median_ci[0] if self.median_ci else None,
            "median_ci_high": self.median_ci[1] if self.median_ci else None,
            "mean_ci_low": self.mean_ci[0] if self.mean_ci else None,
            "mean_ci_high": self.mean_ci[1] if self.mean_ci else None,
            "gained": self.gained,
            "pairs": float(self.pairs),
        }
        return {name: value for name, value in values.items() if value is not None}


def paired_stats(differences: np.ndarray) -> PairedStats:
    """Rules 2 to 4 over an array of differences (in key order)."""
    n = int(differences.size)
    if n == 0:
        return PairedStats(0, None, None, None, None, None, None)
    median, p90 = percentiles(differences, (50.0, 90.0))
    mean = float(np.mean(differences, dtype=np.float64))
    median_ci = mean_ci = None
    if n >= 2:
        ordered = np.sort(differences)
        half_width = Z_95 * math.sqrt(n)
        low = max(1, math.floor((n - half_width) / 2))
        high = min(n, math.ceil(1 + (n + half_width) / 2))
        median_ci = (float(ordered[low - 1]), float(ordered[high - 1]))
        error = Z_95 * float(np.std(differences, ddof=1, dtype=np.float64)) / math.sqrt(n)
        mean_ci = (mean - error, mean + error)
    gained = float(np.count_nonzero(differences < 0)) / n
    return PairedStats(n, float(median), float(p90), mean, median_ci, mean_ci, gained)


def paired_differences(
    turns: pa.Table, column: str, *, dimension: str, treatment: str, baseline: str
) -> pa.Table:
    """The pairs of `column` between two values of the arm column `dimension` (rule 1), sorted
    by key: the key columns and ``difference`` (int64, treatment minus baseline)."""
    others = [name for name in ARM_COLUMNS if name != dimension and name in turns.column_names]
    arm = _decoded(turns[dimension])
    return pair(
        turns.filter(pc.equal(arm, treatment)),
        turns.filter(pc.equal(arm, baseline)),
        column,
        [*others, *TURN_KEY],
    )


def pair(treatment: pa.Table, baseline: pa.Table, column: str, key: Sequence[str]) -> pa.Table:
    """The rows of `treatment` and `baseline` (turn tables) with equal `key` and a value of
    `column` in both, sorted by key: the key columns and ``difference`` (treatment minus
    baseline). Also pairs two runs of the same seeds (key: arm columns and ``TURN_KEY``)."""
    key = list(key)
    sides = []
    for table, name in ((treatment, "treatment"), (baseline, "baseline")):
        mine = table.select([*key, column])
        mine = mine.filter(pc.is_valid(mine[column]))
        sides.append(_plain(mine).rename_columns([*key, name]))
    joined = sides[0].join(sides[1], keys=key, join_type="inner")
    joined = joined.sort_by([(name, "ascending") for name in key])
    difference = pc.subtract(joined["treatment"], joined["baseline"])
    return joined.select(key).append_column("difference", difference)


def _plain(table: pa.Table) -> pa.Table:
    # Joins take plain keys: dictionary columns are decoded first.
    return pa.Table.from_arrays(
        [_decoded(column) for column in table.columns], names=table.column_names
    )


def _decoded(column: pa.ChunkedArray) -> pa.ChunkedArray:
    if pa.types.is_dictionary(column.type):
        return column.cast(column.type.value_type)
    return column


def comparisons(arms: Sequence[str], treatment: str) -> list[tuple[str, str]]:
    """(treatment, baseline) for every other arm present, in the arms' order; none when the
    treatment did not run."""
    if treatment not in arms:
        return []
    return [(treatment, arm) for arm in arms if arm != treatment]
