"""The folder of a capacity search (`toolturn capacity --out DIR`), written atomically:
``capacity.json`` (what `--json` prints) and ``capacity.html``, one self-contained page with the
answer table and, per experiment key, goodput and throughput against load for every arm, the
capacity (a star on the goodput curve) and the saturation point (a diamond on the throughput
curve) marked."""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

from toolturn.capacity.search import ArmCapacity
from toolturn.metrics.atomic import atomic_directory
from toolturn.metrics.summary import arm_label
from toolturn.report.html import page_head
from toolturn.report.interactive import apply_layout
from toolturn.report.plots import COLOURS

CAPACITY_FILE = "capacity.json"
CAPACITY_PAGE = "capacity.html"


def write_capacity_folder(
    out_dir: Path,
    document: dict[str, Any],
    results: Sequence[ArmCapacity],
    knob: str,
    *,
    replace: bool = False,
) -> Path:
    """Writes ``capacity.json`` and ``capacity.html`` into ``out_dir`` atomically; returns the
    page's path."""
    with atomic_directory(out_dir, replace=replace) as staging:
        text = json.dumps(document, indent=2, allow_nan=False) + "\n"
        (staging / CAPACITY_FILE).write_text(text, encoding="utf-8")
        page = render_capacity(document, results, knob)
        (staging / CAPACITY_PAGE).write_text(page, encoding="utf-8")
    return out_dir / CAPACITY_PAGE


def render_capacity(document: dict[str, Any], results: Sequence[ArmCapacity], knob: str) -> str:
    """The page: the objectives, the answer per key and arm, a figure per key."""
    title = f"toolturn capacity: {document['scenario']}"
    objectives = "".join(f"<li><code>{escape(s['text'])}</code></li>" for s in document["slos"])
    keys = list(dict.fromkeys(result.key for result in results))
    parts = [
        page_head(title),
        f"<p>The highest {escape(knob)} at which every objective holds (the mean over the "
        "replications), per recovery profile and policy:</p>",
        f"<ul>{objectives}</ul>",
        _answer_table(results),
        "<p>Goodput: completed turns meeting every per-turn objective per simulated second; "
        "throughput: every completed turn. Saturation: the lowest load probed within 5% of the "
        "highest throughput. Bars: 95% t intervals over the replications.</p>",
        *(
            _figure(key, [r for r in results if r.key == key], knob, index)
            for index, key in enumerate(keys)
        ),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _load(load: float | None) -> str:
    return "none" if load is None else f"{load:g}"


def _answer_table(results: Sequence[ArmCapacity]) -> str:
    head = "".join(
        f"<th>{name}</th>"
        for name in (
            "point",
            "policy",
            "capacity",
            "goodput there (turns/s)",
            "saturation",
            "probes",
        )
    )
    lines = [f"<table><thead><tr>{head}</tr></thead><tbody>"]
    for result in results:
        at = result.probe_at(result.capacity)
        cells = [
            result.key or "(base)",
            arm_label(*result.arm),
            _load(result.capacity) + ("" if result.bounded else "+"),
            "-" if at is None else f"{at.goodput.mean:.3g}",
            _load(result.saturation),
            str(len(result.probes)),
        ]
        lines.append("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in cells) + "</tr>")
    lines.append("</tbody></table>")
    return "\n".join(lines)


def _errors(intervals: list[Any]) -> dict[str, Any]:
    return {
        "type": "data",
        "array": [(i.high - i.mean) if i.high is not None else 0.0 for i in intervals],
        "arrayminus": [(i.mean - i.low) if i.low is not None else 0.0 for i in intervals],
    }


def _figure(key: str, results: Sequence[ArmCapacity], knob: str, index: int) -> str:
    figure = go.Figure()
    for number, result in enumerate(results):
        colour = COLOURS[number % len(COLOURS)]
        name = arm_label(*result.arm)
        loads = [probe.load for probe in result.probes]
        # Goodput with its intervals, solid and marked; throughput, its ceiling, dotted.
        for measure, mode, line in (
            ("goodput", "lines+markers", {"color": colour}),
            ("throughput", "lines", {"color": colour, "dash": "dot"}),
        ):
            values = [getattr(probe, measure) for probe in result.probes]
            figure.add_trace(go.Scatter(
                x=loads, y=[value.mean for value in values], mode=mode,
                name=f"{name}: {measure}", line=line,
                error_y=_errors(values) if measure == "goodput" else None,
            ))
        at = result.probe_at(result.capacity)
        if at is not None:
            _mark(figure, at.load, at.goodput.mean, f"{name}: capacity",
                  {"symbol": "star", "size": 16, "color": colour})
        saturated = result.probe_at(result.saturation)
        if saturated is not None:
            _mark(figure, saturated.load, saturated.throughput.mean, f"{name}: saturation",
                  {"symbol": "diamond", "size": 12, "color": colour})
    apply_layout(figure)
    figure.update_layout(xaxis_title=knob, yaxis_title="turns per simulated second")
    div = figure.to_html(
        full_html=False,
        include_plotlyjs=False,
        div_id=f"capacity-{index}",
        config={"displaylogo": False, "responsive": True},
    )
    heading = f"<h2>Goodput against load{': ' + escape(key) if key else ''}</h2>"
    return f"<figure>{heading}{div}</figure>"


def _mark(figure: go.Figure, load: float, value: float, name: str, marker: dict[str, Any]) -> None:
    """One named point on an arm's curve (its capacity, its saturation)."""
    figure.add_trace(go.Scatter(x=[load], y=[value], mode="markers", name=name, marker=marker))
