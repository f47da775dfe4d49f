"""One arm's rows at one load level reduced, group of rows by group, to what its summary
metrics read (`toolturn.metrics.summary.metric_rows`).

The summary's numbers are counts, sums, a minimum and a maximum, and exact percentiles. All but
the percentiles fold into a few numbers as the rows pass; a percentile keeps its column's
non-null values alone (int64), never the rows. So the summary of a run folder read row group by
row group (`toolturn.metrics.summary_files`) holds, per arm, three arrays of values and a few
counters, however many other columns the rows have; the summary of whole tables is the same
fold over one group per table.

Rules:

1. The fold is additive: a table's rows give the same numbers in one group or in many, in any
   order (counts and sums add, the minimum and maximum are taken, percentiles sort their
   values, and every number is an integer until the metric is computed).
2. The session-fault numbers (`toolturn.metrics.session_faults.FaultFold`) are folded only when
   faults ran; their crash waits pair a turn with its session's next turn, which may be in
   another group, so they take a second pass over the turns (`FaultFold.add_next_turns`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from toolturn.metrics.session_faults import FaultFold

# (table, column) pairs whose non-null values a percentile reads.
DISTRIBUTION_COLUMNS: tuple[tuple[str, str], ...] = (
    ("turns", "ttfts_ns"),
    ("turns", "latency_ns"),
    ("tools", "start_lag_ns"),
)
# (table, column) pairs counted by value.
COUNTED: tuple[tuple[str, str], ...] = (
    ("turns", "outcome"),
    ("repairs", "kind"),
    ("tools", "synthetic_cause"),
    ("requests", "status"),
)
# (table, column) pairs summed.
SUMMED: tuple[tuple[str, str], ...] = (
    ("requests", "output_tokens"),
    ("requests", "input_tokens"),
)


@dataclass
class ArmFold:
    """The folded rows of one arm at one level (see the module docstring)."""

    faults: FaultFold | None = None
    rows: Counter[str] = field(default_factory=Counter)
    counts: dict[tuple[str, str], Counter[str]] = field(default_factory=dict)
    sums: Counter[tuple[str, str]] = field(default_factory=Counter)
    first_sent_ns: int | None = None
    last_end_ns: int | None = None
    _values: dict[tuple[str, str], list[np.ndarray]] = field(default_factory=dict)

    def add(self, name: str, group: pa.Table) -> None:
        """Rows of table `name` (rule 1)."""
        self.rows[name] += group.num_rows
        for table, column in DISTRIBUTION_COLUMNS:
            if table == name:
                self._values.setdefault((table, column), []).append(
                    group[column].drop_null().to_numpy()
                )
        for table, column in COUNTED:
            if table == name:
                self.counts.setdefault((table, column), Counter()).update(
                    _value_counts(group[column])
                )
        for table, column in SUMMED:
            if table == name:
                self.sums[table, column] += pc.sum(group[column]).as_py() or 0
        if name == "turns" and group.num_rows:
            self._span(pc.min(group["request_sent_ns"]).as_py(),
                       pc.max(group["turn_end_ns"]).as_py())
        if self.faults is not None:
            self.faults.add(name, group)

    def _span(self, first: int | None, last: int | None) -> None:
        if first is not None:
            self.first_sent_ns = first if self.first_sent_ns is None else min(
                self.first_sent_ns, first
            )
        if last is not None:
            self.last_end_ns = last if self.last_end_ns is None else max(self.last_end_ns, last)

    def values(self, table: str, column: str) -> np.ndarray:
        """The non-null values of a distribution column (`DISTRIBUTION_COLUMNS`)."""
        if (table, column) not in DISTRIBUTION_COLUMNS:
            raise KeyError(f"{table}.{column} is not folded (arm_fold.DISTRIBUTION_COLUMNS)")
        chunks = self._values.get((table, column), [])
        return np.concatenate(chunks) if chunks else np.array([], dtype=np.int64)

    def count(self, table: str, column: str, value: str) -> int:
        """Rows of `table` whose `column` (of `COUNTED`) is `value`."""
        if (table, column) not in COUNTED:
            raise KeyError(f"{table}.{column} is not counted (arm_fold.COUNTED)")
        return self.counts.get((table, column), Counter())[value]


def fold_tables(tables: Mapping[str, pa.Table], *, faults: bool) -> ArmFold:
    """The fold of whole tables, one group each."""
    fold = ArmFold(FaultFold() if faults else None)
    for name, table in tables.items():
        fold.add(name, table)
    if fold.faults is not None and fold.faults.needs_next_turns:
        fold.faults.add_next_turns(tables["turns"])
    return fold


def _value_counts(column: pa.ChunkedArray) -> Counter[str]:
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    counts: Counter[str] = Counter()
    for entry in pc.value_counts(column).to_pylist():
        if entry["values"] is not None:
            counts[entry["values"]] += entry["counts"]
    return counts
