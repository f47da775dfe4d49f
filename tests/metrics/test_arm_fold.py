"""The summary's fold of one arm's rows (toolturn.metrics.arm_fold, rule 1) and the paired
differences merged row group by row group (toolturn.metrics.paired_files): the same numbers whatever
groups the rows come in, as `summarize` gets from whole tables."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

from tests.engine.test_engine_session_faults import run, scenario
from toolturn.metrics.arm_fold import ArmFold, fold_tables
from toolturn.metrics.paired import PAIRED_COLUMNS, TURN_KEY, pair
from toolturn.metrics.paired_files import merged_differences
from toolturn.metrics.schema import TABLES
from toolturn.metrics.session_faults import FaultFold
from toolturn.metrics.summary import Categories, categories, metric_rows

SCHEMAS = {spec.name: spec.schema for spec in TABLES}


def in_order_groups(
    table: pa.Table, rng: random.Random, smallest: int = 0, largest: int = 40
) -> list[pa.Table]:
    """The rows of `table` in order, in groups of `smallest` to `largest` rows."""
    groups, start = [], 0
    while start < table.num_rows:
        size = rng.randint(smallest, largest)
        groups.append(table.slice(start, size))
        start += size
    return groups


def groups_of(table: pa.Table, rng: random.Random) -> list[pa.Table]:
    """The rows of `table` in groups of 1 to 7 rows, the groups shuffled."""
    groups = in_order_groups(table, rng, 1, 7)
    rng.shuffle(groups)
    return groups


def crashed_run_tables() -> dict[str, pa.Table]:
    result = run(scenario({"faults": {"crash": 0.5}}))
    tables = {}
    for name in ("turns", "tools", "repairs", "requests", "sessions"):
        columns = result.rows[name]
        schema = pa.schema([f for f in SCHEMAS[name] if f.name in columns])
        tables[name] = pa.Table.from_pydict(columns, schema=schema)
    return tables


def test_an_arm_folded_in_shuffled_groups_has_the_numbers_of_its_whole_tables() -> None:
    tables = crashed_run_tables()
    found = Categories(
        categories(tables["turns"], "outcome"), categories(tables["repairs"], "kind"),
        categories(tables["tools"], "synthetic_cause"), categories(tables["requests"], "status"),
        faults_ran=True,
    )
    whole = metric_rows("streaming", fold_tables(tables, faults=True), found)
    assert any(row.metric == "crash_to_request_ns.count" and row.value > 0 for row in whole)
    rng = random.Random(7)
    folded = ArmFold(FaultFold())
    for name, table in tables.items():
        for group in groups_of(table, rng):
            folded.add(name, group)
    assert folded.faults is not None and folded.faults.needs_next_turns
    for group in groups_of(tables["turns"], rng):
        folded.faults.add_next_turns(group)
    assert metric_rows("streaming", folded, found) == whole


def arm_turns(rng: random.Random, keys: list[tuple[int, int]]) -> pa.Table:
    """Turns of one arm at some of `keys`, in key order, with null values now and then."""
    mine = sorted(key for key in keys if rng.random() < 0.8)

    def value() -> int | None:
        return None if rng.random() < 0.2 else rng.randint(0, 10**12)

    return pa.table({
        "load_level": pa.array([0] * len(mine), pa.int64()),
        "session_id": pa.array([s for s, _ in mine], pa.int64()),
        "turn_index": pa.array([t for _, t in mine], pa.int64()),
        **{column: pa.array([value() for _ in mine], pa.int64()) for column in PAIRED_COLUMNS},
    })


@pytest.mark.parametrize("seed", range(5))
def test_merged_row_groups_give_the_joined_pairs_in_key_order(seed: int) -> None:
    rng = random.Random(seed)
    keys = [(s, t) for s in range(60) for t in range(rng.randint(1, 6))]
    treatment, baseline = arm_turns(rng, keys), arm_turns(rng, keys)
    merged = merged_differences(
        in_order_groups(treatment, rng), in_order_groups(baseline, rng)
    )
    for column in PAIRED_COLUMNS:
        joined = pair(treatment, baseline, column, TURN_KEY)["difference"].to_numpy()
        assert joined.size > 0
        assert np.array_equal(merged[column], joined)


def test_an_arm_with_no_turns_has_no_pairs() -> None:
    rng = random.Random(1)
    treatment = arm_turns(rng, [(0, 0), (0, 1)])
    merged = merged_differences(in_order_groups(treatment, rng), [])
    assert all(merged[column].size == 0 for column in PAIRED_COLUMNS)


def test_turns_out_of_key_order_are_refused() -> None:
    rng = random.Random(2)
    turns = arm_turns(rng, [(s, 0) for s in range(20)])
    backwards = [turns.slice(10), turns.slice(0, 10)]
    with pytest.raises(ValueError, match="not in the table's order"):
        merged_differences(backwards, [turns])


def test_a_column_the_fold_does_not_keep_is_refused_not_empty() -> None:
    fold = ArmFold()
    with pytest.raises(KeyError, match="not folded"):
        fold.values("turns", "first_event_ns")
    with pytest.raises(KeyError, match="not counted"):
        fold.count("turns", "stop_reason", "end_turn")
