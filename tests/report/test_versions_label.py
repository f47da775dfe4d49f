"""The report page names the project `toolturn` in its versions (issue 29): run.json's
`versions` keeps the key `sim` (data, read by older tools), only what a person reads changes."""

from __future__ import annotations

from toolturn.metrics.provenance import package_versions
from toolturn.report.html import render_html


def test_the_page_shows_toolturn_for_the_recorded_sim_version() -> None:
    assert "sim" in package_versions()  # the key a run records stays
    metadata = {"scenario": "s", "seed": 1, "versions": {"sim": "0.1.0", "numpy": "2.1.0"}}
    page = render_html(metadata, [], [])
    assert "<dt>versions</dt><dd>toolturn 0.1.0, numpy 2.1.0</dd>" in page
    assert "sim 0.1.0" not in page
