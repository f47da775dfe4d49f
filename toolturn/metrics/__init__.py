"""Run metrics: tables with explicit schemas, atomic Parquet run folders, and their summary.

Every command writes its run folder one way: the engine writes each unit's rows to part files
as it goes (``toolturn.metrics.parts``) and ``write_run_from_parts`` assembles the folder with
its summary; a driver holding its units' rows (``toolturn live``, ``toolturn fidelity``'s live
run) hands them to ``write_run_from_rows``, which goes through part files too. ``read_run``
reads a folder back for reports and comparisons. ``RunCollector`` and ``write_run`` build and
write a run from tables held in memory, the same bytes: no command uses them; tests and small
hand-made runs do.
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
