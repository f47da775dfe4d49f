"""`sim report RUN_DIR`: figures and an HTML page for a run folder, in RUN_DIR/report/.
`sim report BASE NEW`: a page comparing two runs, in NEW/compare/compare.html."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from sim.metrics.reader import read_run
from sim.metrics.summary_table import print_summary


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "report",
        help="draw the figures and HTML page of a run folder",
        description="Write PNG figures and report.html for a run folder into RUN_DIR/report/ "
        "(replacing an older report there: a folder with report.html; anything else named "
        "report is an error), and print the run's summary.",
    )
    parser.add_argument("run_dir", metavar="RUN_DIR", type=Path, help="a folder written by sim run")
    parser.add_argument(
        "new_dir", metavar="NEW", type=Path, nargs="?",
        help="with a second run folder: write NEW/compare/compare.html comparing RUN_DIR (the "
        "base) and NEW, as sim compare does, with the per-turn differences",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported here: matplotlib takes a second to load, which no other command should pay.
    from sim.report.writer import write_report

    if args.new_dir is not None:
        from sim.report.compare_page import write_compare_page

        print(f"wrote {write_compare_page(read_run(args.run_dir), read_run(args.new_dir))}")
        return 0
    folder = read_run(args.run_dir)
    page = write_report(folder)
    print_summary(folder.summary, title=f"Summary of {folder.path}")
    print(f"wrote {page}")
    return 0
