"""How summary numbers are shown to people: readable metric names, a unit that fits the value,
and a precision that fits the unit. The stored summary keeps exact values in its base units
(``ns``, counts, rates); only what is printed or drawn goes through here.

Rules:

1. A metric's label is what people say: ``ttfts_ns.p50`` is "TTFTS p50",
   ``latency_ns.p99`` "turn latency p99", ``status_per_1k_requests.529`` "HTTP 529".
2. Durations of one row (or one column of a paired table) share one unit, the largest of s, ms,
   µs and ns in which the row's largest magnitude is at least 1 (ms when all are zero), so values
   are compared at a glance and seconds-scale values are not shown to a thousandth of a ms.
3. Precision: three significant digits of the row's largest magnitude (at most 3 decimals);
   counts and nanoseconds whole; shares as percentages to one decimal.
4. A sentence of several findings wraps between them, never inside one (``Phrases``); a table
   too wide for the console is shown one record per row (``Fitted``), never cropped.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

NS_PER_UNIT: tuple[tuple[str, float], ...] = (("s", 1e9), ("ms", 1e6), ("µs", 1e3), ("ns", 1.0))
WHOLE_UNITS = frozenset(
    {"turns", "tools", "requests", "rows", "pairs", "sessions", "crashes", "compactions"}
)
PER_1K = "per 1k requests"
UNBOUNDED = 1_000_000  # cells: wider than any table
_DISTRIBUTION_NAMES = {
    "ttfts_ns": "TTFTS",
    "latency_ns": "turn latency",
    "start_lag_ns": "tool start lag",
}
_COUNT_NAMES = {
    "ttfts_ns.count": "turns that started a tool",
    "latency_ns.count": "turns",
    "start_lag_ns.count": "tools started",
    "requests.count": "requests",
}
_FIXED_NAMES = {
    "simulated_span_ns": "simulated span",
    "throughput.turns_per_s": "throughput (completed turns)",
    "throughput.output_tokens_per_s": "output tokens",
    "throughput.input_tokens_per_s": "input tokens",
    "harness.events_per_wall_s": "harness speed (wall clock)",
    "refused_without_repair_per_1k_requests": "would be refused (400) without repair",
    "calls_lost_per_1k_requests": "tool calls lost in crashes",
    "compactions.count": "compactions",
    "sessions.broken_transcript": "sessions stopped: broken transcript",
    "crash_to_request_ns.mean": "crash to next request, mean",
    "crash_to_request_ns.p50": "crash to next request, p50",
    "crash_to_request_ns.count": "crashes followed by a request",
}
_PREFIXES = (
    ("turns.outcome.", "turns "),
    ("repairs_per_1k_requests.", "repairs: "),
    ("repairs_by_cause_per_1k_requests.", "repairs caused by "),
    ("synthetic_per_1k_requests.", "synthetic: "),
    ("status_per_1k_requests.", "HTTP "),
)
_STATISTIC_NAMES = {
    "median": "Δ median",
    "p90": "Δ p90",
    "mean": "Δ mean",
    "median_ci_low": "Δ median, 95% CI low",
    "median_ci_high": "Δ median, 95% CI high",
    "mean_ci_low": "Δ mean, 95% CI low",
    "mean_ci_high": "Δ mean, 95% CI high",
    "gained": "share of turns sooner",
    "pairs": "pairs",
}


def measure_name(column: str) -> str:
    """The name people use for a duration column (``ttfts_ns`` -> "TTFTS")."""
    return _DISTRIBUTION_NAMES.get(column, column)


def metric_label(metric: str) -> str:
    """Rule 1: the readable name of a summary metric (the metric itself when unknown)."""
    if metric in _COUNT_NAMES:
        return _COUNT_NAMES[metric]
    if metric in _FIXED_NAMES:
        return _FIXED_NAMES[metric]
    if metric.startswith("paired."):
        column, _, statistic = metric.removeprefix("paired.").partition(".")
        return f"{measure_name(column)} {_STATISTIC_NAMES.get(statistic, statistic)}"
    column, _, rest = metric.partition(".")
    if column in _DISTRIBUTION_NAMES and rest.startswith("p"):
        return f"{_DISTRIBUTION_NAMES[column]} {rest}"
    for prefix, shown in _PREFIXES:
        if metric.startswith(prefix):
            category = metric.removeprefix(prefix)
            return f"{shown}{'all' if category == 'all' else category}"
    return metric


def duration_unit(values_ns: Iterable[float]) -> tuple[str, float]:
    """Rule 2: the unit (name, nanoseconds in it) for durations shown together."""
    largest = max((abs(v) for v in values_ns if math.isfinite(v)), default=0.0)
    for name, scale in NS_PER_UNIT:
        if largest >= scale:
            return name, scale
    return ("ms", 1e6) if largest == 0 else NS_PER_UNIT[-1]


def decimals_for(largest: float) -> int:
    """Rule 3: decimals giving three significant digits of `largest` (0 to 3)."""
    if largest == 0 or not math.isfinite(largest):
        return 0
    return max(0, min(3, 2 - math.floor(math.log10(abs(largest)))))


def unit_label(unit: str) -> str:
    """Short forms for the table's unit column."""
    return {PER_1K: "/1k req", "share": "%"}.get(unit, unit)


class RowFormat:
    """How the values of one row (in one stored unit) are shown: rules 2 and 3."""

    def __init__(self, unit: str, values: Iterable[float]) -> None:
        values = [v for v in values if math.isfinite(v)]
        self.unit = unit
        self.scale = 1.0
        self.shown_unit = unit_label(unit)
        if unit == "ns":
            self.shown_unit, self.scale = duration_unit(values)
        largest = max((abs(v) / self.scale for v in values), default=0.0)
        if unit in WHOLE_UNITS or self.shown_unit == "ns":
            self.decimals = 0
        elif unit == "share":
            self.scale, self.decimals = 0.01, 1
        else:
            self.decimals = decimals_for(largest)

    def __call__(self, value: float | None) -> str:
        if value is None:
            return "-"
        if not math.isfinite(value):
            return str(value)
        return f"{value / self.scale:,.{self.decimals}f}"


class Phrases:
    """A sentence of phrases (`lead` + phrases joined by `separator`) that a console wraps
    between phrases only, never inside one unless it is wider than the console alone: a CI log
    of 100 columns read "turn latency 0 / ms" when rich wrapped the headline at a word. Lines
    after the first are indented by `indent`."""

    def __init__(
        self, lead: str, phrases: Sequence[str], *, separator: str = "; ", style: str = "",
        indent: int = 2,
    ) -> None:
        self.lead, self.phrases, self.separator = lead, list(phrases), separator
        self.style, self.indent = style, indent

    @property
    def plain(self) -> str:
        """The sentence on one line."""
        return self.lead + self.separator.join(self.phrases)

    def lines(self, width: int) -> list[str]:
        """The sentence cut into lines of at most `width` cells, between phrases."""
        lines: list[str] = []
        line = self.lead
        last = len(self.phrases) - 1
        for index, phrase in enumerate(self.phrases):
            glue = "" if index == 0 else self.separator
            # A line that another phrase follows ends in the separator's mark (`;`).
            end = "" if index == last else self.separator.rstrip()
            if line.strip() and cell_len(line + glue + phrase + end) > width:
                lines.append((line + glue).rstrip())
                line = " " * self.indent + phrase
            else:
                line += glue + phrase
        return [*lines, line]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for line in self.lines(options.max_width):
            yield Text(line, style=self.style)


class Fitted:
    """A table shown whole: as itself where its `minimum_width` fits the console, else one
    record per row, its leading left-aligned cells (what the row is about) then each other cell
    after its column's header: `streaming @ 32 · TTFTS Δ median: base -353 ms, new -376 ms,
    ...`, wrapped between fields. Rich would shrink such a table's columns to the console's
    width and crop what still did not fit: in a 100-column CI log, the change and the verdict."""

    def __init__(self, table: Table) -> None:
        self.table = table

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if minimum_width(console, options, self.table) <= options.max_width:
            yield self.table
            return
        if self.table.title:
            yield Text.from_markup(str(self.table.title))
        yield from records(self.table)


def minimum_width(console: Console, options: ConsoleOptions, table: Table) -> int:
    """The narrowest `table` can be drawn without cropping: each wrapping column as wide as its
    longest word, each `no_wrap` column as its longest cell, with padding and borders. (Rich's
    own measurement counts a `no_wrap` column at its longest word too, and crops it.)"""
    # Measured unbounded: a measurement is clamped to the width it is given.
    unbounded = options.update_width(UNBOUNDED)
    _, right, _, left = Padding.unpack(table.padding)
    total = 0
    for column in table.columns:
        cells = [column.header, *column.cells]
        found = [
            Measurement.get(console, unbounded, Text.from_markup(c) if isinstance(c, str) else c)
            for c in cells
        ]
        widest = max((m.maximum if column.no_wrap else m.minimum) for m in found)
        total += max(widest, column.min_width or 0) + left + right
    if table.box is not None:
        total += len(table.columns) - 1 + (2 if table.show_edge else 0)
    return total


def table_rows(table: Table) -> list[list[str]]:
    """The plain text of each row's cells (markup read, styles dropped)."""
    columns = [[_plain(cell) for cell in column.cells] for column in table.columns]
    return [list(row) for row in zip(*columns, strict=True)]


def column_headers(table: Table) -> list[str]:
    """Each column's header on one line."""
    return [" ".join(_plain(column.header).split()) for column in table.columns]


def records(table: Table) -> list[Phrases]:
    """`Fitted`'s one record per row."""
    headers = column_headers(table)
    keys = 0
    while keys < len(table.columns) - 1 and table.columns[keys].justify == "left":
        keys += 1
    keys = max(keys, 1)
    found = []
    for row in table_rows(table):
        about = " · ".join(cell for cell in row[:keys] if cell)
        fields = [f"{header} {cell}".strip() for header, cell in zip(
            headers[keys:], row[keys:], strict=True)]
        found.append(Phrases(f"{about}: " if about else "", fields, separator=", "))
    return found


def _plain(cell: object) -> str:
    if isinstance(cell, Text):
        return cell.plain
    return Text.from_markup(cell).plain if isinstance(cell, str) else str(cell)
