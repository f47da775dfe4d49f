"""The report's figures on a run of several wire protocols (issue 34, section 3): every series is
one arm on one protocol, named ``policy · protocol``, and holds that protocol's rows only; the
paired figures pair within a protocol; a run of experiment points has a table and series per
protocol, and the page comparing two runs pairs and names each protocol's turns apart; a run of one
protocol draws as before (plain names)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from matplotlib.figure import Figure

from toolturn.cli import main
from toolturn.metrics import read_run
from toolturn.metrics.paired import paired_differences
from toolturn.metrics.reader import RunFolder
from toolturn.metrics.replications import replication_rows
from toolturn.metrics.summary import SummaryRow, values
from toolturn.report.compare import compare_runs, paired_between
from toolturn.report.compare_page import render_compare
from toolturn.report.html import render_html
from toolturn.report.interactive import Interactive, cdf_points, draw_interactive
from toolturn.report.plots import PLOTS
from toolturn.report.points import interval_figures, points_html
from toolturn.report.series import by_arm, policies_of

PROTOCOLS = ("anthropic", "openai-chat")
POLICIES = ("streaming", "at_message_stop", "serial")
TWO = """
name = "two_protocols"
seed = 4
[load]
mode = "closed"
sessions = 4
concurrency = 2
[model]
protocol = ["anthropic", "openai-chat"]
[model.script]
kind = "generated"
end_probability = 0.4
tool_calls = { kind = "uniform", low = 1, high = 3 }
"""
ONE = TWO.replace('protocol = ["anthropic", "openai-chat"]', 'protocol = "anthropic"')
SERIES = {f"{policy} · {protocol}" for policy in POLICIES for protocol in PROTOCOLS}


def _run(folder: Path, text: str) -> RunFolder:
    (folder / "scenario.toml").write_text(text)
    out = folder / "run"
    assert main(["run", str(folder / "scenario.toml"), "--out", str(out), "--no-report"]) == 0
    return read_run(out)


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> RunFolder:
    return _run(tmp_path_factory.mktemp("two"), TWO)


@pytest.fixture(scope="module")
def one(tmp_path_factory: pytest.TempPathFactory) -> RunFolder:
    return _run(tmp_path_factory.mktemp("one"), ONE)


def _page(run: RunFolder) -> dict[str, Interactive]:
    return {f.id: f for f in draw_interactive(run) if isinstance(f, Interactive)}


def _named(figure: Interactive) -> dict[str, np.ndarray]:
    """Each legend entry's x values, by every series name it stands for (rule 4 names
    coinciding series together: "a = b (n=4)")."""
    named: dict[str, np.ndarray] = {}
    for trace in figure.figure.data:
        if trace.mode == "markers+text":  # the p50/p90/p99 marks of a CDF
            continue
        for name in str(trace.name).split(" (n=")[0].split(" = "):
            named[name] = np.asarray(trace.x)
    return named


def _rows(table: pa.Table, protocol: str, policy: str) -> pa.Table:
    return table.filter(pc.and_(pc.equal(table["protocol"].cast(pa.string()), protocol),
                                pc.equal(table["policy"].cast(pa.string()), policy)))


def test_every_distribution_of_the_page_has_a_series_per_policy_and_protocol(
    two: RunFolder,
) -> None:
    page = _page(two)
    for id_ in ("ttfts-cdf", "latency-cdf", "start-lag-cdf", "tool-concurrency"):
        assert set(_named(page[id_])) == SERIES, id_


def test_each_series_holds_its_protocols_rows_only(two: RunFolder) -> None:
    page = _page(two)
    for id_, table, column in (("latency-cdf", "turns", "latency_ns"),
                               ("start-lag-cdf", "tools", "start_lag_ns")):
        for protocol in PROTOCOLS:
            for policy in POLICIES:
                mine = values(_rows(two.tables[table], protocol, policy), column)
                expected, _ = cdf_points(np.maximum(mine / 1_000_000, 0.001))
                drawn = _named(page[id_])[f"{policy} · {protocol}"]
                assert np.array_equal(drawn, expected), (id_, policy, protocol)
    # The protocols differ where Chat Completions knows a call complete later: a pooled series
    # would be neither.
    lags = _named(page["start-lag-cdf"])
    assert not np.array_equal(lags["streaming · anthropic"], lags["streaming · openai-chat"])


def test_the_paired_figures_pair_within_each_protocol(two: RunFolder) -> None:
    page = _page(two)
    expected = [f"streaming − {baseline} · {protocol}" for protocol in PROTOCOLS
                for baseline in ("at_message_stop", "serial")]
    headline = page["paired-by-load"].figure.data
    assert [trace.name for trace in headline] == expected + expected
    paired = page["paired-cdf"].figure.data
    assert [trace.name for trace in paired] == expected + expected
    turns = two.tables["turns"]
    for trace, name in zip(paired, expected, strict=False):
        protocol = name.rsplit(" · ", 1)[1]
        baseline = name.split(" − ")[1].split(" · ")[0]
        mine = turns.filter(pc.equal(turns["protocol"].cast(pa.string()), protocol))
        pairs = paired_differences(mine, "ttfts_ns", dimension="policy",
                                   treatment="streaming", baseline=baseline)
        xs, _ = cdf_points(pairs["difference"].to_numpy() / 1_000_000)
        assert np.array_equal(np.asarray(trace.x), xs), name
    assert "Each protocol's series pair that protocol's turns only" in page["paired-cdf"].caption


def _labels(figure: Figure) -> set[str]:
    """A static figure's series names: its legends' entries and its panels' titles."""
    legends = [figure.legends, *(axes.get_legend() for axes in figure.axes)]
    texts = {text.get_text() for legend in legends if legend
             for one in (legend if isinstance(legend, list) else [legend])
             for text in one.get_texts()}
    titles = {axes.get_title() for axes in figure.axes if axes.get_visible()}
    names = {text.split(" (n=")[0] for text in texts | titles}
    return {name for name in names if "·" in name or name in POLICIES}


def test_every_static_figure_draws_a_series_per_policy_and_protocol(two: RunFolder) -> None:
    run = by_arm(two)
    assert policies_of(run) == [f"{policy} · {protocol}" for protocol in PROTOCOLS
                                for policy in POLICIES]
    drawn = 0
    for plot in PLOTS:
        figure = plot.draw(run, policies_of(run))
        if isinstance(figure, Figure):
            drawn += 1
            assert _labels(figure) == SERIES, plot.file
    assert drawn == 5  # every figure but the load sweep's


def test_a_run_of_one_protocol_draws_as_before(one: RunFolder, two: RunFolder) -> None:
    assert by_arm(one) is one
    page, split = _page(one), _page(two)
    for id_ in ("latency-cdf", "start-lag-cdf", "tool-concurrency"):
        assert set(_named(page[id_])) == set(POLICIES), id_
    # The same draws: each series of the single protocol is that protocol's of the sweep.
    for policy in POLICIES:
        assert np.array_equal(_named(page["start-lag-cdf"])[policy],
                              _named(split["start-lag-cdf"])[f"{policy} · anthropic"])
    assert [trace.name for trace in page["paired-cdf"].figure.data][:2] == [
        "streaming − at_message_stop", "streaming − serial"]
    assert "protocol" not in page["paired-cdf"].caption
    for plot in PLOTS:
        figure = plot.draw(one, policies_of(one))
        if isinstance(figure, Figure):
            assert _labels(figure) == set(POLICIES), plot.file


def _point_rows(protocols: tuple[str, ...]) -> list[SummaryRow]:
    """A run of one experiment key, two replications: each policy's TTFTS p99 on each protocol
    (openai-chat's ten times anthropic's), and the rows over the replications."""
    rows = [
        SummaryRow(policy, "ttfts_ns.p99", scale * base * (1 + replication), "ns",
                   protocol=protocol, point=replication, replication=replication, point_key="k")
        for protocol, scale in zip(protocols, (1.0, 10.0), strict=False)
        for policy, base in (("streaming", 1e6), ("serial", 2e6))
        for replication in (0, 1)
    ]
    return rows + replication_rows(rows)


def test_the_points_figures_and_tables_are_per_protocol() -> None:
    summary = _point_rows(PROTOCOLS)
    figure = next(f for f in interval_figures(summary) if isinstance(f, Interactive))
    means = {trace.name: list(trace.y) for trace in figure.figure.data}
    assert means == {"streaming · anthropic": [1.5], "serial · anthropic": [3.0],
                     "streaming · openai-chat": [15.0], "serial · openai-chat": [30.0]}
    page = points_html(summary)
    assert "<h3>k (2 replications) · anthropic</h3>" in page
    assert "<h3>k (2 replications) · openai-chat</h3>" in page
    single = next(f for f in interval_figures(_point_rows(PROTOCOLS[:1]))
                  if isinstance(f, Interactive))
    assert [trace.name for trace in single.figure.data] == ["streaming", "serial"]
    assert "<h3>k (2 replications)</h3>" in points_html(_point_rows(PROTOCOLS[:1]))


def test_the_compare_page_pairs_and_names_each_protocol(one: RunFolder, two: RunFolder) -> None:
    pairings = paired_between(two, two)
    turns = two.tables["turns"]
    assert {(p.protocol, p.policy, p.column, p.stats.pairs) for p in pairings} == {
        (protocol, policy, column, len(values(_rows(turns, protocol, policy), column)))
        for protocol in PROTOCOLS for policy in POLICIES for column in ("ttfts_ns", "latency_ns")
    }
    page = render_compare(two, two, compare_runs(two, two), pairings)
    for series in SERIES:
        assert f"<td>{series} @ 2</td>" in page
        assert f'"name":{json.dumps(series)}' in page  # the CDF's series
    single = render_compare(one, one, compare_runs(one, one), paired_between(one, one))
    assert "<td>streaming @ 2</td>" in single and " · anthropic" not in single


def test_a_sweep_of_several_protocols_has_a_level_table_per_protocol(two: RunFolder) -> None:
    # The run's summary as if at two load levels (the page's table is drawn from the summary).
    swept = [replace(row, load_level=level, load=load) for level, load in ((0, 2.0), (1, 4.0))
             for row in two.summary]
    page = render_html(two.metadata, swept, [])
    for protocol in PROTOCOLS:
        table = page[page.index(f"<h3>Per load level · {protocol}</h3>"):]
        table = table[: table.index("</table>")]
        assert table.count("<tr><td>4</td>") == len(POLICIES)
    assert "<h3>Per load level</h3>" not in page
