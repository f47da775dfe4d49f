"""A fidelity check's outcome: printed as tables, drawn as one figure, written as JSON.

    result = FidelityResult(errors, pairing, hops, speed=10.0, tolerances=Tolerances())
    print_fidelity(result); draw_fidelity(result, turns, tools, folder / "fidelity.png")
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from rich.console import Console
from rich.table import Table

from toolturn.fidelity.overhead import Hop
from toolturn.fidelity.pairing import METRICS, MetricError, Pairing, metric_values
from toolturn.fidelity.saturation import Saturation
from toolturn.fidelity.settings import Tolerances

# The verdicts. Every turn paired with the same story and every metric within tolerance is a
# pass, saturated or not (a late harness only adds to the live side's times). Otherwise, worst
# first: unpaired turns or other stories compare different turns, whatever the host (a late
# harness changes times, not which turns ran: the saturation is said beside it); a saturated
# live run measured its own lateness, so its errors say nothing of the simulator; only then do
# the metrics' errors speak.
SATURATED = "live run could not keep up"
UNPAIRED = "turns unpaired or with another story"
BEYOND = "beyond tolerance"
WITHIN = "within tolerance, all turns paired"


@dataclass(frozen=True, slots=True)
class FidelityResult:
    errors: list[MetricError]
    pairing: Pairing
    hops: list[Hop]
    speed: float
    tolerances: Tolerances
    saturation: Saturation | None = None

    @property
    def failures(self) -> list[MetricError]:
        return [error for error in self.errors if not error.within(self.tolerances)]

    @property
    def passed(self) -> bool:
        return self.verdict == WITHIN

    @property
    def saturated(self) -> bool:
        return self.saturation is not None and self.saturation.saturated

    @property
    def verdict(self) -> str:
        if self.pairing.complete and not self.failures:
            return WITHIN
        if not self.pairing.complete:
            return UNPAIRED
        return SATURATED if self.saturated else BEYOND

    def to_json(self) -> dict[str, Any]:
        pairing = self.pairing
        return {
            "speed": self.speed,
            "tolerances": asdict(self.tolerances),
            "verdict": self.verdict,
            "pairing": {**asdict(pairing), "unpaired": list(pairing.unpaired),
                        "other_story": list(pairing.other_story), "complete": pairing.complete},
            "saturation": None if self.saturation is None else self.saturation.to_json(),
            "metrics": [
                {**asdict(error), "error_median": _finite(error.error_median),
                 "error_p95": _finite(error.error_p95), "within": error.within(self.tolerances)}
                for error in self.errors
            ],
            "hops_wall_ms": [asdict(hop) for hop in self.hops],
            "passed": self.passed,
        }


def _finite(value: float) -> float | str:
    """JSON has no infinity: an unbounded relative error is written as text."""
    return value if math.isfinite(value) else str(value)


def _number(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:,.2f}"


def _percent(value: float) -> str:
    if math.isnan(value):
        return "-"
    return f"{value:+.2%}" if math.isfinite(value) else ("+inf" if value > 0 else "-inf")


def print_fidelity(result: FidelityResult, console: Console | None = None) -> None:
    # Wide enough for the table when the output is not a terminal (a file, a pipe).
    console = console or Console(width=None if Console().is_terminal else 160)
    tolerances = result.tolerances
    table = Table(title=f"fidelity: live at speed {result.speed:g} against simulated "
                  f"(tolerance: median {tolerances.median:.0%}, p95 {tolerances.p95:.0%}, or "
                  f"{tolerances.absolute_ms:g} ms)")
    for header in ("policy", "metric", "pairs", "sim p50", "live p50", "err p50", "sim p95",
                   "live p95", "err p95", "diff p50", "diff p95", ""):
        table.add_column(header, justify="left" if header in ("policy", "metric") else "right")
    for error in result.errors:
        table.add_row(
            error.policy, error.metric, str(error.pairs), _number(error.sim_median),
            _number(error.live_median), _percent(error.error_median), _number(error.sim_p95),
            _number(error.live_p95), _percent(error.error_p95), _number(error.diff_median),
            _number(error.diff_p95), "ok" if error.within(tolerances) else "FAIL",
        )
    console.print(table)
    pairing = result.pairing
    console.print(
        f"turns: {pairing.paired} paired of {pairing.sim_turns} simulated and "
        f"{pairing.live_turns} live; {pairing.same_story} of them with the same attempts, "
        "tool calls and outcome"
    )
    _print_differing(console, "without a twin", pairing.unpaired)
    _print_differing(console, "with another story", pairing.other_story)
    hops = Table(title="what the real path adds per hop (wall-clock ms)")
    for header in ("hop", "count", "median", "p95"):
        hops.add_column(header, justify="left" if header == "hop" else "right")
    for hop in result.hops:
        hops.add_row(hop.name, str(hop.count), _number(hop.median_ms), _number(hop.p95_ms))
    console.print(hops)
    saturation = result.saturation
    if saturation is not None and saturation.saturated:
        meaning = {WITHIN: "within tolerance all the same",
                   UNPAIRED: "the unpaired turns decide the verdict all the same"}.get(
            result.verdict, "its errors measure the harness, not the simulator")
        console.print(f"the live run could not keep up: {'; '.join(saturation.reasons())}; "
                      f"{meaning}. Try {saturation.suggestion()}.", highlight=False,
                      markup=False,  # `[load]` is TOML, not markup
                      soft_wrap=True)  # one line: the suggested options copy whole
    console.print(f"verdict: {result.verdict}", highlight=False)


def _print_differing(console: Console, what: str, names: tuple[str, ...], shown: int = 10) -> None:
    if not names:
        return
    console.print(f"{len(names)} turns {what}:", highlight=False)
    for name in names[:shown]:
        console.print(f"  {name}", highlight=False, markup=False, soft_wrap=True)
    if len(names) > shown:
        console.print(f"  ... and {len(names) - shown} more (all in fidelity.json)",
                      highlight=False)


def draw_fidelity(
    result: FidelityResult, turns: pd.DataFrame, tools: pd.DataFrame, path: Path
) -> Path:
    """Live against simulated, one panel per metric, a point per paired turn (or call) coloured
    by policy, with the line where they are equal."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    policies = list(dict.fromkeys(error.policy for error in result.errors))
    figure, axes = plt.subplots(1, len(METRICS), figsize=(4.2 * len(METRICS), 4.2))
    for axis, metric in zip(np.atleast_1d(axes), METRICS, strict=True):
        top = 0.0
        for policy in policies:
            mine_turns = turns[turns["policy"] == policy]
            mine_tools = tools[tools["policy"] == policy]
            sim = metric_values(mine_turns, mine_tools, metric, "sim").to_numpy()
            live = metric_values(mine_turns, mine_tools, metric, "live").to_numpy()
            both = ~np.isnan(sim) & ~np.isnan(live)
            axis.scatter(sim[both], live[both], s=8, alpha=0.6, label=policy)
            if both.any():
                top = max(top, float(np.max(sim[both])), float(np.max(live[both])))
        axis.plot([0, top or 1.0], [0, top or 1.0], color="grey", linewidth=0.8)
        axis.set_title(metric)
        axis.set_xlabel("simulated")
        axis.set_ylabel("live")
    np.atleast_1d(axes)[0].legend(fontsize="small")
    figure.suptitle(f"live at speed {result.speed:g} against simulated, paired turn by turn")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
