"""A run of experiment points piped into a CI log (issue 29, section 2): each key's table is
drawn through `display.Fitted`, so two profiles by two policies with their differences, wider
than 100 columns, are one record per metric: every column of every row appears, none cropped
and no word folded."""

from __future__ import annotations

from dataclasses import replace

from rich.console import Console

from toolturn.metrics.points_table import key_grid, key_tables, over_replications
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


def test_each_protocol_of_a_key_has_its_own_table() -> None:
    rows = [row for row in _rows() if row.profile == "default"]
    assert [title for title, _ in key_tables(rows)] == [f"{KEY} (0 replications)"]
    chat = [replace(row, protocol="openai-chat", value=row.value * 2) for row in rows]
    tables = key_tables(rows + chat)
    assert [title for title, _ in tables] == [
        f"{KEY} (0 replications) · anthropic", f"{KEY} (0 replications) · openai-chat"
    ]
    assert tables[0][1] == rows and tables[1][1] == chat
    # Each table holds its protocol's values only (no arm's cell taken from the other's rows).
    grid = key_grid(tables[1][1])
    assert grid.heads == ["streaming", "serial", "streaming − serial"]
    out = Console(width=LOG_WIDTH, record=True, color_system=None)
    out.print(summary_renderables(rows + chat))
    assert f"Experiment · {KEY} (0 replications) · openai-chat" in out.export_text()
