"""Run tables as pandas DataFrames that keep their integers: nullable columns (``ttfts_ns`` of
a turn without tools, ``start_ns`` of a tool that never started, ...) become pandas' nullable
``Int64`` (``<NA>`` where null), not float64 with NaN, which rounds nanoseconds above 2**53 and
turns counts into floats. The Parquet files are unchanged (int64 nanoseconds); reading them
directly keeps the integers the same way: ``pandas.read_parquet(path,
dtype_backend="numpy_nullable")``, or ``dtype_backend="pyarrow"`` for Arrow-backed columns."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa

__all__ = ["NULLABLE_DTYPES", "table_frame"]

# Arrow types whose pandas default cannot hold a null: each to its nullable pandas dtype
# (categories and strings already hold one; floats keep NaN).
NULLABLE_DTYPES: dict[pa.DataType, pd.api.extensions.ExtensionDtype] = {
    pa.int64(): pd.Int64Dtype(),
    pa.int32(): pd.Int32Dtype(),
    pa.bool_(): pd.BooleanDtype(),
}


def table_frame(table: pa.Table) -> pd.DataFrame:
    """`table` as a DataFrame, its integer and boolean columns nullable (module docstring)."""
    return table.to_pandas(types_mapper=NULLABLE_DTYPES.get)
