"""The run summary (`toolturn.metrics.summary`) computed from a run folder's table files, arm by
arm: the arm source (`toolturn.metrics.summary_plan.ArmSource`) of a run folder, `FolderSource`.

`summarize` takes whole tables; a large run's tables do not fit in memory, so this reads, for
each arm at each load level, only that arm's rows and only the columns the summary reads, one
row group at a time (row groups hold rows sorted by arm, so the others are skipped by their
statistics), and folds each group into the arm's numbers (`toolturn.metrics.arm_fold`): what stays
is the values the exact percentiles sort, not the rows. The paired rows read the two arms they
compare, each only its turns' key and paired columns. The rows, their order and their values
are `summarize`'s exactly (tests/engine/test_run_parts.py holds it to that): the same plan makes
them (`toolturn.metrics.summary_plan.summary_rows`), percentiles stay exact.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from toolturn.metrics import session_faults
from toolturn.metrics.arm_fold import ArmFold
from toolturn.metrics.misfires import READ as MISFIRES_READ
from toolturn.metrics.misfires import misfire_rows
from toolturn.metrics.paired import PAIRED_COLUMNS
from toolturn.metrics.paired_files import KEY_COLUMNS, merged_differences
from toolturn.metrics.session_faults import FaultFold
from toolturn.metrics.summary_plan import Categories, UnitKey, speeds_on, summary_rows
from toolturn.metrics.summary_row import Arm, SummaryRow

__all__ = ["SUMMARY_COLUMNS", "FolderSource", "summarize_folder"]

_UNIT = ("profile", "policy", "load_level", "load")
# The columns the summary reads of each table (besides the unit columns).
SUMMARY_COLUMNS: dict[str, tuple[str, ...]] = {
    "turns": (
        "session_id", "turn_index", "ttfts_ns", "latency_ns", "outcome", "turn_end_ns",
        "request_sent_ns",
    ),
    "tools": ("start_lag_ns", "synthetic_cause"),
    "repairs": ("kind", "cause", "session_id", "request_index"),
    "requests": ("status", "input_tokens", "output_tokens"),
    "sessions": ("n_calls_lost", "n_compactions", "outcome"),
}
# The columns of turns a paired comparison reads (`paired_files`: the turn's key within one arm
# at one level, the paired values).
_PAIRED_READ = (*KEY_COLUMNS, *PAIRED_COLUMNS)
# The columns of turns the crash waits' second pass reads (`session_faults.FaultFold`).
_NEXT_TURNS_READ = ("session_id", "turn_index", "request_sent_ns")
# The category columns whose every value gets a row for every arm.
_CATEGORIES = (("turns", "outcome"), ("repairs", "kind"), ("tools", "synthetic_cause"),
               ("requests", "status"))


def summarize_folder(
    folder: Path,
    *,
    events_per_wall_s: Mapping[UnitKey, float] | None = None,
    point: int | None = None,
) -> list[SummaryRow]:
    """What `summarize` gives for the tables written in `folder` (see the module docstring), or
    for the rows of one experiment `point` of them (the categories are the whole run's)."""
    folder = Path(folder)
    outcomes, kinds, causes, statuses = (
        _categories(folder / f"{table}.parquet", column) for table, column in _CATEGORIES
    )
    found = Categories(outcomes, kinds, causes, statuses, faults_ran=_faults_ran(folder))
    where: dict[str, object] = {} if point is None else {"point": point}
    speeds = dict(events_per_wall_s or {})
    # Protocol by protocol, in name order, as `summarize` does (a run without rows: unsplit).
    protocols = _categories(folder / "sessions.parquet", "protocol")
    if not protocols:
        return summary_rows(FolderSource(folder, where), found, speeds_on(speeds, None))
    rows: list[SummaryRow] = []
    for protocol in protocols:
        mine = {**where, "protocol": protocol}
        rows += [replace(row, protocol=protocol)
                 for row in summary_rows(FolderSource(folder, mine), found,
                                         speeds_on(speeds, protocol))]
        rows += misfire_rows(_arm_groups(folder, "turns", mine, MISFIRES_READ), protocol)
    return rows


class FolderSource:
    """The arm source of a run folder's table files (of the rows `where` says: one experiment
    point's, or all), each arm's rows read a row group at a time."""

    def __init__(self, folder: Path, where: Mapping[str, object]) -> None:
        self._folder = folder
        self._where = where
        self._units = _units(folder, where)

    def levels(self) -> list[tuple[int, float | None]]:
        return sorted({(level, load) for _, _, level, load in self._units})

    def arms_at(self, level: int) -> set[Arm]:
        return {(profile, policy) for profile, policy, at, _ in self._units if at == level}

    def fold(self, level: int, arm: Arm, faults: bool) -> ArmFold:
        """The arm's rows at `level`, of every table, folded row group by row group."""
        wanted = self._wanted(level, arm)
        fold = ArmFold(FaultFold() if faults else None)
        for name in SUMMARY_COLUMNS:
            for group in _arm_groups(self._folder, name, wanted):
                fold.add(name, group)
        if fold.faults is not None and fold.faults.needs_next_turns:
            for group in _arm_groups(self._folder, "turns", wanted, _NEXT_TURNS_READ):
                fold.faults.add_next_turns(group)
        return fold

    def differences(
        self, level: int, treatment: Arm, baseline: Arm
    ) -> Callable[[str], np.ndarray]:
        """The two arms' turns merged row group by row group (`toolturn.metrics.paired_files`),
        each comparison reading its two arms' turns alone."""
        treated, base = (
            _arm_groups(self._folder, "turns", self._wanted(level, arm), _PAIRED_READ)
            for arm in (treatment, baseline)
        )
        return merged_differences(treated, base).__getitem__

    def _wanted(self, level: int, arm: Arm) -> dict[str, object]:
        return {**self._where, "profile": arm[0], "policy": arm[1], "load_level": level}


def _units(folder: Path, where: Mapping[str, object]) -> set[tuple[str, str, int, float | None]]:
    """The (profile, policy, load_level, load) of every simulation (of the rows `where` says):
    every row joins to a session, so the sessions table has them all."""
    found: set[tuple[str, str, int, float | None]] = set()
    for group in _row_groups(folder / "sessions.parquet", [*_UNIT, *where], where):
        group = group.filter(_matching(group, where)) if where else group
        unique = _plain(group.select(list(_UNIT))).group_by(list(_UNIT)).aggregate([])
        for entry in unique.to_pylist():
            found.add((entry["profile"], entry["policy"], int(entry["load_level"]), entry["load"]))
    return found


def _categories(path: Path, column: str) -> list[str]:
    seen: set[str] = set()
    for group in _row_groups(path, [column]):
        values = group[column]
        if pa.types.is_dictionary(values.type):
            values = values.cast(values.type.value_type)
        seen.update(str(v) for v in pc.unique(values).to_pylist() if v is not None)
    return sorted(seen)


def _faults_ran(folder: Path) -> bool:
    """`session_faults.ran` over the whole run, one row group at a time."""
    return any(
        session_faults.ran_in_turns(group)
        for group in _row_groups(folder / "turns.parquet", ["outcome"])
    ) or any(
        session_faults.ran_in_sessions(group)
        for group in _row_groups(folder / "sessions.parquet", ["n_compactions", "outcome"])
    )


def _arm_groups(
    folder: Path, name: str, wanted: Mapping[str, object], read: tuple[str, ...] | None = None
) -> Iterator[pa.Table]:
    """The summary's columns (or only the columns `read`) of table `name`'s rows with the
    `wanted` values, a row group at a time (the groups without such rows are skipped)."""
    path = folder / f"{name}.parquet"
    columns = list(SUMMARY_COLUMNS[name] if read is None else read)
    for group in _row_groups(path, [*columns, *(c for c in wanted if c not in columns)], wanted):
        chosen = group.filter(_matching(group, wanted)).select(columns)
        if chosen.num_rows:
            yield chosen


def _matching(group: pa.Table, wanted: Mapping[str, object]) -> pa.ChunkedArray:
    keep = None
    for column, value in wanted.items():
        values = group[column]
        if pa.types.is_dictionary(values.type):
            values = values.cast(values.type.value_type)
        test = pc.equal(values, value)
        keep = test if keep is None else pc.and_(keep, test)
    assert keep is not None
    return keep


def _row_groups(
    path: Path, columns: list[str], wanted: Mapping[str, object] | None = None
) -> Iterator[pa.Table]:
    """The row groups of `path` (those columns) that may hold rows with the `wanted` values."""
    parquet = pq.ParquetFile(path)
    names = parquet.schema_arrow.names
    for index in range(parquet.num_row_groups):
        if wanted and not _may_hold(parquet.metadata.row_group(index), names, wanted):
            continue
        yield parquet.read_row_group(index, columns=columns)


def _may_hold(group: pq.RowGroupMetaData, names: list[str], wanted: Mapping[str, object]) -> bool:
    for column, value in wanted.items():
        statistics = group.column(names.index(column)).statistics
        if statistics is None or not statistics.has_min_max:
            continue
        low, high = statistics.min, statistics.max
        if isinstance(low, bytes):
            low, high = low.decode(), high.decode()
        if type(low) is type(value) and not low <= value <= high:  # type: ignore[operator]
            return False
    return True


def _plain(table: pa.Table) -> pa.Table:
    return pa.Table.from_arrays(
        [
            column.cast(column.type.value_type) if pa.types.is_dictionary(column.type) else column
            for column in table.columns
        ],
        names=table.column_names,
    )
