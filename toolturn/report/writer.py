"""The report folder of a run, written atomically into ``<run>/report/``: ``report.html`` (one
self-contained interactive page) and the static PNG/SVG figures beside it."""

from __future__ import annotations

from pathlib import Path

from toolturn.metrics.atomic import atomic_directory, check_destination
from toolturn.metrics.reader import RunFolder
from toolturn.report.html import render_html
from toolturn.report.interactive import draw_interactive
from toolturn.report.plots import draw_figures
from toolturn.report.points import first_point

REPORT_FOLDER = "report"
REPORT_PAGE = "report.html"


def write_report(run: RunFolder) -> Path:
    """Draws the figures and the page into ``<run>/report/`` atomically; returns the page's path.

    An older report there is replaced whole; anything else named ``report`` there (a file, a
    folder without report.html) raises ``UserError`` before anything is drawn.
    """
    destination = run.path / REPORT_FOLDER
    check_destination(destination, replace=True, kind="report folder", marker=REPORT_PAGE)
    # A run of experiment points draws its figures from its first point (toolturn.report.points).
    drawn = first_point(run)
    with atomic_directory(destination, replace=True) as staging:
        exports = draw_figures(drawn, staging)
        page = render_html(run.metadata, run.summary, draw_interactive(drawn), exports)
        (staging / REPORT_PAGE).write_text(page, encoding="utf-8")
    return destination / REPORT_PAGE
