"""Issue 29: the fidelity frames keep a run's integers: a nullable nanosecond column is pandas'
`Int64` (null as `<NA>`), not float64, which rounds values above 2**53, and a story column with
nulls on both sides still pairs."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa

from toolturn.fidelity.pairing import metric_values, pair_turns, plain_frame

BIG = 2**53 + 1  # float64 cannot hold it


def turns(ttfts: list[int | None], outcome: str) -> pa.Table:
    rows = len(ttfts)
    return pa.table({
        "profile": pa.array(["default"] * rows).dictionary_encode(),
        "policy": pa.array(["streaming"] * rows).dictionary_encode(),
        "load": pa.array([1.0] * rows), "session_id": pa.array(range(rows), pa.int64()),
        "turn_index": pa.array([0] * rows, pa.int64()),
        "n_attempts": pa.array([1] * rows, pa.int64()),
        "n_tool_calls": pa.array([None] * rows, pa.int64()),
        "outcome": pa.array([outcome] * rows).dictionary_encode(),
        "ttfts_ns": pa.array(ttfts, pa.int64()),
    })


def test_nullable_nanoseconds_stay_integers() -> None:
    frame = plain_frame(turns([BIG, None], "completed"))
    assert frame["ttfts_ns"].dtype == pd.Int64Dtype()
    assert frame["ttfts_ns"][0] == BIG and frame["ttfts_ns"][1] is pd.NA
    assert frame["outcome"].tolist() == ["completed", "completed"]  # decoded, not categorical


def test_twins_with_nulls_on_both_sides_pair_and_their_metrics_read_as_floats() -> None:
    both, pairing = pair_turns(turns([BIG, None], "completed"), turns([BIG + 2, None], "completed"))
    assert pairing.complete and pairing.same_story == 2
    assert both["ttfts_ns_live"][0] - both["ttfts_ns_sim"][0] == 2  # exact in integers
    values = metric_values(both, pd.DataFrame(), "ttfts_ms", "sim")
    assert values.dtype == "float64" and values.isna().tolist() == [False, True]
