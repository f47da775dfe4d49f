"""`toolturn report RUN_DIR`: figures and an HTML page for a run folder, in RUN_DIR/report/.

`toolturn report BASE NEW [--out DIR]`: a page comparing two runs, DIR/compare.html; without
`--out`, DIR is a new folder beside NEW named `compare-BASE-NEW` (the two folders' names). Run
folders are never changed: DIR may not be in one, and an existing DIR is replaced only when it
is a compare folder (one with compare.html).

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
from toolturn.metrics.writer import RUN_FILE


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
        help="with a second run folder: write a page comparing RUN_DIR (the base) and NEW, as "
        "toolturn compare does, with the per-turn differences",
    )
    parser.add_argument(
        "-o", "--out", type=Path, metavar="DIR",
        help="with NEW: the folder of the compare page (default: compare-BASE-NEW beside NEW; "
        "an existing one is replaced only if it holds a compare page)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported here: the recording page's module reads Parquet, which no other command should pay.
    from toolturn.report.probe_page import is_probe_folder, write_probe_report
    from toolturn.report.recording import is_recording, write_recording_report

    if args.out is not None and args.new_dir is None:
        raise UserError(
            "--out: only with two run folders (toolturn report BASE NEW --out DIR); a folder's "
            "own report is written inside it"
        )
    if is_probe_folder(args.run_dir):  # `toolturn probe --out`: its scorecard drawn
        print(f"wrote {write_probe_report(args.run_dir)}")
        return 0
    if is_recording(args.run_dir):
        print(f"wrote {write_recording_report(args.run_dir)}")
        return 0
    if args.new_dir is not None:
        from toolturn.report.compare_page import write_compare_page

        base, new = read_run(args.run_dir), read_run(args.new_dir)
        out = args.out or compare_out_dir(args.run_dir, args.new_dir)
        _outside_run_folders(out)
        print(f"wrote {write_compare_page(base, new, out)}")
        return 0
    folder = read_run(args.run_dir)
    page = draw_report(folder)
    print_summary(folder.summary, title=f"Summary of {folder.path}")
    print(f"wrote {page}")
    return 0


def compare_out_dir(base: Path, new: Path) -> Path:
    """`compare-BASE-NEW` beside NEW, from the folders' own names (`.` and `..` resolved)."""
    new = new.resolve()
    return new.parent / f"compare-{base.resolve().name}-{new.name}"


def _outside_run_folders(out: Path) -> None:
    # A run folder's files are its tables and its own report: a compare page is never put there.
    for folder in [out, *out.resolve().parents]:
        if (folder / RUN_FILE).is_file():
            raise UserError(f"{out}: inside the run folder {folder}, which is never changed; "
                            "choose a folder outside it")


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
