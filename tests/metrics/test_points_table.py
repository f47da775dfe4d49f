"""A run of experiment points piped into a CI log (issue 29, section 2): each key's table is
drawn through `display.Fitted`, so two profiles by two policies with their differences, wider
than 100 columns, are one record per metric: every column of every row appears, none cropped
and no word folded."""

from __future__ import annotations

from rich.console import Console

from toolturn.metrics.points_table import key_grid, over_replications
from toolturn.metrics.summary_row import SummaryRow
from toolturn.metrics.summary_table import LOG_WIDTH, summary_renderables

KEY = "load.concurrency=4"
METRICS = {
    "ttfts_ns.p50": ("ns", 1.2e9),
    "latency_ns.p99": ("ns", 30.1e9),
    "refused_without_repair_per_1k_requests": ("per 1k requests", 12.5),
}


def _rows() -> list[SummaryRow]:
    """Over-replication rows of one key: two profiles by two policies, and per profile the
    difference of streaming against serial."""
    rows = []
    for profile in ("default", "claude-code"):
        for policy in ("streaming", "serial"):
            for metric, (unit, value) in METRICS.items():
                rows.append(SummaryRow(
                    policy, metric, value, unit, profile=profile, point_key=KEY,
                    ci_low=value * 0.9, ci_high=value * 1.1,
                ))
        for metric, (unit, value) in METRICS.items():
            rows.append(SummaryRow(
                "streaming", f"difference.{metric}", -value / 10, unit, profile=profile,
                versus="serial", point_key=KEY, ci_low=-value / 5, ci_high=value / 100,
            ))
    return rows


def test_a_piped_points_table_shows_every_column_of_every_row() -> None:
    rows = _rows()
    console = Console(width=LOG_WIDTH, record=True, color_system=None)
    console.print(summary_renderables(rows))
    out = console.export_text()
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= LOG_WIDTH
    assert lines[0] == f"Experiment · {KEY} (0 replications)"
    grid = key_grid(over_replications(rows)[KEY])
    assert len(grid.heads) == 6  # four arms, two differences: wider than the log
    joined = out.replace("\n  ", " ")  # a record's continuation lines
    for label, unit, values in grid.lines:
        (record,) = [line for line in joined.splitlines() if line.startswith(f"{label} · ")]
        assert record.startswith(f"{label} · {unit}: ")
        for head, (text, mark) in zip(grid.heads, values, strict=True):
            cell = text if mark is None else f"{text}  {mark}"
            assert f"{head} {cell}" in record, (head, cell)
    assert "…" not in out
