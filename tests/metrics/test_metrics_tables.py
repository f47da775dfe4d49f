"""Row accumulation: schema and dtypes, deterministic order, errors that name table and column."""

from __future__ import annotations

import enum

import numpy as np
import pyarrow as pa
import pytest

from tests.helpers.metrics_support import collect, handmade_rows, handmade_tables, turn
from toolturn.metrics import MetricsError, RunCollector
from toolturn.metrics.schema import CATEGORY, TABLES, TURNS


def test_every_column_has_its_declared_type_and_categories_are_dictionaries() -> None:
    tables = handmade_tables()
    for spec in TABLES:
        for field in spec.schema:
            assert tables[spec.name].schema.field(field.name).type == field.type
    turns = tables["turns"]
    assert turns.schema.field("policy").type == CATEGORY
    assert turns.schema.field("latency_ns").type == pa.int64()
    assert turns.schema.field("ttfts_ns").nullable
    assert not turns.schema.field("latency_ns").nullable


def test_run_wide_columns_are_filled_by_the_collector() -> None:
    turns = handmade_tables()["turns"]
    assert set(turns["run_id"].to_pylist()) == {"run-1"}
    assert set(turns["scenario"].to_pylist()) == {"handmade"}
    assert set(turns["seed"].to_pylist()) == {7}


def test_rows_are_sorted_by_policy_session_turn_whatever_the_order_added() -> None:
    forward = collect(handmade_rows()).tables()
    backward = collect(list(reversed(handmade_rows()))).tables()
    for name in forward:
        assert forward[name].equals(backward[name])
        assert (
            forward[name]["policy"]
            .combine_chunks()
            .dictionary.equals(backward[name]["policy"].combine_chunks().dictionary)
        )
    keys = [
        (row["policy"], row["session_id"], row["turn_index"])
        for row in forward["turns"].to_pylist()
    ]
    assert keys == sorted(keys)


def test_omitted_nullable_columns_are_null() -> None:
    collector = RunCollector(run_id="r", scenario="s", seed=1)
    collector.add("repairs", dict(
        policy="p", profile="default", protocol="anthropic", load_level=0, session_id=0,
        turn_index=0,
        request_index=0, kind="k",
    ))
    assert collector.tables()["repairs"]["tool_use_id"].to_pylist() == [None]


def test_unknown_column_is_refused_at_once_naming_table_and_column() -> None:
    collector = RunCollector(run_id="r", scenario="s", seed=1)
    with pytest.raises(MetricsError, match=r"turns: unknown or constant column\(s\) \['latency'\]"):
        collector.add("turns", {**turn("p", 0, 0, 0, 1, 2), "latency": 3})
    with pytest.raises(MetricsError, match="run_id"):
        collector.add("turns", {**turn("p", 0, 0, 0, 1, 2), "run_id": "other"})
    assert collector.row_counts()["turns"] == 0


def test_wrong_type_is_reported_with_table_column_and_row() -> None:
    collector = RunCollector(run_id="r", scenario="s", seed=1)
    collector.add("turns", turn("p", 0, 0, 0, 1, 2))
    collector.add("turns", {**turn("p", 0, 1, 0, 1, 2), "latency_ns": "slow"})
    with pytest.raises(MetricsError, match=r"^turns\.latency_ns: row 1: "):
        collector.tables()


def test_missing_required_value_is_reported_with_table_column_and_row() -> None:
    collector = RunCollector(run_id="r", scenario="s", seed=1)
    row = turn("p", 0, 0, 0, 1, 2)
    del row["turn_end_ns"]
    collector.add("turns", row)
    with pytest.raises(MetricsError, match=r"^turns\.turn_end_ns: row 0: missing value"):
        collector.tables()


def test_an_empty_run_builds_empty_tables_of_the_full_schema() -> None:
    tables = RunCollector(run_id="r", scenario="s", seed=1).tables()
    assert tables["turns"].num_rows == 0
    assert tables["turns"].schema.equals(TURNS.schema)


def test_string_enums_and_numpy_integers_are_accepted() -> None:
    class Kind(enum.StrEnum):
        MISSING = "missing_result"

    collector = RunCollector(run_id="r", scenario="s", seed=1)
    collector.add("repairs", dict(
        policy="p",
        profile="default",
        protocol="anthropic",
        load_level=np.int64(0),
        session_id=np.int64(4),
        turn_index=0,
        request_index=0,
        kind=Kind.MISSING,
    ))
    row = collector.tables()["repairs"].to_pylist()[0]
    assert (row["session_id"], row["kind"]) == (4, "missing_result")


def test_a_row_tagged_with_an_unknown_table_is_refused() -> None:
    with pytest.raises(MetricsError, match="no table 'turn'"):
        RunCollector(run_id="r", scenario="s", seed=1).add("turn", {})
