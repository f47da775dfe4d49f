"""Run metrics: tables with explicit schemas, atomic Parquet run folders, and their summary.

The engine adds rows to a ``RunCollector``; ``write_run`` checks, sorts and writes them with the
summary; ``read_run`` reads a folder back for reports and comparisons.
"""

from sim.metrics.collector import RunCollector
from sim.metrics.provenance import file_sha256
from sim.metrics.reader import RunFolder, read_run
from sim.metrics.summary import SummaryRow, summarize
from sim.metrics.summary_table import print_summary, summary_table
from sim.metrics.tables import MetricsError
from sim.metrics.writer import RunMetadata, write_run

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
