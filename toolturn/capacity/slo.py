"""Service-level objectives: `METRIC OP THRESHOLD`, checked against a run's summary.

    ttfts.p99 < 5s                    TTFTS p99 under 5 seconds
    latency.p95 <= 30s                turn latency p95 at most 30 seconds
    start_lag.p50 < 200ms
    status_per_1k_requests.529 < 10   any summary metric (toolturn.metrics.summary) by its name
    throughput.turns_per_s > 2

Rules:

1. METRIC is a summary metric's name (`KNOWN` lists them); `ttfts`, `latency` and `start_lag`
   are short for the columns `ttfts_ns`, `latency_ns` and `start_lag_ns`. OP is one of `<`,
   `<=`, `>`, `>=`. A name the summary never has is refused when it is read.
2. A duration metric (a percentile of an `_ns` column, or `simulated_span_ns`) needs a time
   unit on its threshold (`ns`, `us`, `ms`, `s`); any other metric takes a plain number in its
   own unit.
3. An objective is met by a value that satisfies it; a metric the run lacks (no turn started a
   tool, so no TTFTS) is not met, since nothing shows the objective holds.
4. For goodput, an objective on a percentile of a turn column (`ttfts_ns`, `latency_ns`) is also
   a per-turn test: a turn meets it when its own value satisfies the threshold (a turn without
   the value, such as TTFTS of a turn without tools, meets it).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

from toolturn.errors import UserError, quoted
from toolturn.metrics.summary import DISTRIBUTIONS, PERCENTILES

_ALIASES = {"ttfts": "ttfts_ns", "latency": "latency_ns", "start_lag": "start_lag_ns"}
_OPERATORS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
_NS_PER = {"ns": 1.0, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}
_PERCENTILE = re.compile(r"(?P<column>[a-z_]+_ns)\.p[0-9.]+")
# The summary's metrics (toolturn.metrics.summary): percentiles and counts of its distributions, the
# fixed ones, and per-category counts and rates (a category the run never saw counts 0).
KNOWN: frozenset[str] = frozenset(
    [f"{column}.{label}" for _, column, _ in DISTRIBUTIONS for label, _ in PERCENTILES]
    + [f"{column}.count" for _, column, _ in DISTRIBUTIONS]
    + [
        "requests.count",
        "simulated_span_ns",
        "throughput.turns_per_s",
        "throughput.output_tokens_per_s",
        "throughput.input_tokens_per_s",
    ]
)
CATEGORY_PREFIXES = (
    "turns.outcome.",
    "repairs_per_1k_requests.",
    "synthetic_per_1k_requests.",
    "status_per_1k_requests.",
)
_SLO = re.compile(
    r"\s*(?P<metric>[A-Za-z0-9_.]+)\s*(?P<op><=|>=|<|>)\s*"
    r"(?P<number>[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)\s*(?P<unit>[a-zµ]*)\s*"
)
# The turn columns a per-turn test reads (rule 4).
TURN_COLUMNS = ("ttfts_ns", "latency_ns")


@dataclass(frozen=True)
class Slo:
    """One objective: `metric` (a summary metric's name) `op` `threshold` (in the metric's
    unit: ns for durations), and the text it was parsed from."""

    text: str
    metric: str
    op: str
    threshold: float

    def met(self, value: float | None) -> bool:
        """Rule 3."""
        return value is not None and _OPERATORS[self.op](value, self.threshold)

    @property
    def turn_column(self) -> str | None:
        """The turn column of a per-turn test (rule 4), or None."""
        match = _PERCENTILE.fullmatch(self.metric)
        column = match.group("column") if match else None
        return column if column in TURN_COLUMNS else None

    def turn_met(self, value: float | None) -> bool:
        """Rule 4 for one turn's value of `turn_column`."""
        return value is None or _OPERATORS[self.op](value, self.threshold)


def parse_slo(text: str) -> Slo:
    """The objective `text` says; raises UserError naming it and what is wrong (rules 1, 2)."""
    match = _SLO.fullmatch(text)
    if match is None:
        raise UserError(
            f"--slo {quoted(text)}: expected METRIC OP THRESHOLD, such as 'ttfts.p99 < 5s' "
            "(OP one of <, <=, >, >=)"
        )
    name, unit = match.group("metric"), match.group("unit")
    column, dot, rest = name.partition(".")
    metric = _ALIASES.get(column, column) + dot + rest
    number = float(match.group("number"))
    if metric not in KNOWN and not (
        metric.startswith(CATEGORY_PREFIXES) and metric not in CATEGORY_PREFIXES
    ):
        raise UserError(
            f"--slo {quoted(text)}: no summary metric {quoted(metric)} (such as ttfts.p99, "
            "latency.p95, start_lag.p50, throughput.turns_per_s, status_per_1k_requests.529, "
            "turns.outcome.completed)"
        )
    duration = _PERCENTILE.fullmatch(metric) is not None or metric == "simulated_span_ns"
    if duration:
        if unit not in _NS_PER:
            raise UserError(
                f"--slo {quoted(text)}: {metric} is a duration: give its threshold a unit "
                "(ns, us, ms or s), such as 5s"
            )
        number *= _NS_PER[unit]
    elif unit:
        raise UserError(
            f"--slo {quoted(text)}: {metric} is not a duration: give a plain number (no "
            f"{quoted(unit)})"
        )
    return Slo(text=text.strip(), metric=metric, op=match.group("op"), threshold=number)
