"""Nullable nanosecond columns read into pandas stay integers (issue 29): the project's reader
(`RunFolder.frame`, `toolturn.metrics.frames`) and the documented way to read a file
(`pandas.read_parquet(..., dtype_backend="numpy_nullable")`) give ``Int64`` with ``<NA>``; the
Parquet columns are int64 nanoseconds as before."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.helpers.metrics_support import handmade_tables, metadata
from toolturn.errors import UserError
from toolturn.metrics import write_run
from toolturn.metrics.frames import table_frame
from toolturn.metrics.reader import read_run


def test_the_run_reader_keeps_nullable_nanoseconds_integers(tmp_path: Path) -> None:
    write_run(tmp_path / "run", handmade_tables(), metadata())
    run = read_run(tmp_path / "run")
    turns = run.frame("turns")
    assert run.tables["turns"]["ttfts_ns"].null_count == 1  # a turn without tools
    assert turns["ttfts_ns"].dtype == pd.Int64Dtype()
    assert turns["ttfts_ns"].isna().sum() == 1
    kept = run.tables["turns"]["ttfts_ns"].drop_null().to_pylist()
    assert turns["ttfts_ns"].dropna().tolist() == kept
    assert turns["latency_ns"].dtype == pd.Int64Dtype()  # never null: integers all the same
    tools = run.frame("tools")
    assert tools["start_ns"].dtype == pd.Int64Dtype() and tools["start_ns"].isna().any()
    assert pq.read_schema(tmp_path / "run" / "turns.parquet").field("ttfts_ns").type == pa.int64()
    # The documented way of reading a file directly.
    direct = pd.read_parquet(tmp_path / "run" / "turns.parquet", dtype_backend="numpy_nullable")
    assert direct["ttfts_ns"].dtype == pd.Int64Dtype()
    with pytest.raises(UserError, match="no table 'events'"):
        run.frame("events")  # not traced


def test_nanoseconds_past_2_to_the_53_stay_exact() -> None:
    big = 2**53 + 1  # a float64 would round it
    frame = table_frame(pa.table({"end_ns": pa.array([big, None], pa.int64())}))
    assert frame["end_ns"][0] == big and frame["end_ns"].isna()[1]
