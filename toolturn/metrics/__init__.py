"""Run metrics: tables with explicit schemas, atomic Parquet run folders, and their summary.

The engine adds rows to a ``RunCollector``; ``write_run`` checks, sorts and writes them with the
summary; ``read_run`` reads a folder back for reports and comparisons.
"""

from toolturn.metrics.collector import RunCollector
from toolturn.metrics.provenance import file_sha256
from toolturn.metrics.reader import RunFolder, read_run
from toolturn.metrics.summary import SummaryRow, summarize
from toolturn.metrics.summary_table import print_summary, summary_table
from toolturn.metrics.tables import MetricsError
from toolturn.metrics.writer import RunMetadata, write_run

__all__ = [
    "MetricsError",
    "RunCollector",
    "RunFolder",
    "RunMetadata",
    "SummaryRow",
    "file_sha256",
    "print_summary",
    "read_run",
    "summarize",
    "summary_table",
    "write_run",
]
