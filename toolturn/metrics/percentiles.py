"""The one percentile method of the project, used by the summary, the paired differences, the
report and the pandas and DuckDB examples of docs/early-tool-start.md.

numpy's ``method="higher"``: the q-th percentile of n sorted values is the value at position
``ceil(q/100 * (n - 1))`` (from 0). It is always a value some row has (an integer of nanoseconds,
never an interpolation), and a tail is never under-reported. The same number in pandas is
``Series.quantile(q / 100, interpolation="higher")``; in DuckDB it is
``list_sort(list(x))[CAST(ceil(q / 100 * (count(x) - 1)) AS BIGINT) + 1]`` (DuckDB's
``quantile_cont`` interpolates, and its ``quantile_disc`` is the nearest rank, the
``ceil(q/100 * n)``-th smallest: both can differ from this, most in small samples and tails).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np

PERCENTILE_METHOD: Final = "higher"
PERCENTILE_METHOD_TEXT: Final = (
    "numpy method='higher': the value at sorted position ceil(q/100 * (n - 1)) from 0, "
    "a value some row has"
)


def percentiles(values: np.ndarray, qs: Sequence[float]) -> list[float]:
    """The ``qs`` percentiles (0..100) of a non-empty array, by ``PERCENTILE_METHOD``."""
    return [float(value) for value in np.percentile(values, list(qs), method=PERCENTILE_METHOD)]
