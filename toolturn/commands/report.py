"""`toolturn report RUN_DIR`: figures and an HTML page for a run folder, in RUN_DIR/report/.

`toolturn report BASE NEW`: a page comparing two runs, in NEW/compare/compare.html.

Exit status 0 done, 2 bad input (not a run folder) or a report that could not be written (a
full disk: the run folder's tables are left as they were, and no half report).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from toolturn.errors import UserError
from toolturn.metrics.reader import RunFolder, read_run
from toolturn.metrics.summary_table import print_summary


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "report",
        help="draw the figures and HTML page of a run folder",
        description="Write PNG figures and report.html for a run folder into RUN_DIR/report/ "
        "(replacing an older report there: a folder with report.html; anything else named "
        "report is an error), and print the run's summary.",
    )
    parser.add_argument("run_dir", metavar="RUN_DIR", type=Path,
                        help="a folder written by toolturn run "
                        "(or a recording: toolturn serve --record)")
    parser.add_argument(
        "new_dir", metavar="NEW", type=Path, nargs="?",
        help="with a second run folder: write NEW/compare/compare.html comparing RUN_DIR (the "
        "base) and NEW, as toolturn compare does, with the per-turn differences",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported here: the recording page's module reads Parquet, which no other command should pay.
    from toolturn.report.probe_page import is_probe_folder, write_probe_report
    from toolturn.report.recording import is_recording, write_recording_report

    if is_probe_folder(args.run_dir):  # `toolturn probe --out`: its scorecard drawn
        print(f"wrote {write_probe_report(args.run_dir)}")
        return 0
    if is_recording(args.run_dir):
        print(f"wrote {write_recording_report(args.run_dir)}")
        return 0
    if args.new_dir is not None:
        from toolturn.report.compare_page import write_compare_page

        print(f"wrote {write_compare_page(read_run(args.run_dir), read_run(args.new_dir))}")
        return 0
    folder = read_run(args.run_dir)
    page = draw_report(folder)
    print_summary(folder.summary, title=f"Summary of {folder.path}")
    print(f"wrote {page}")
    return 0


def draw_report(folder: RunFolder, *, note: str = "") -> Path:
    """Writes the run's report folder; returns the page's path. A failed write (a full disk, a
    folder made read-only meanwhile) is a `UserError` naming the folder and the reason, then
    `note`; the writer leaves no half report behind."""
    # Imported here: matplotlib takes a second to load, which no other command should pay.
    from toolturn.report.writer import REPORT_FOLDER, write_report

    try:
        return write_report(folder)
    except OSError as error:
        destination = folder.path / REPORT_FOLDER
        reason = error.strerror or str(error)
        raise UserError(f"{destination}: cannot write the report ({reason}){note}") from None
