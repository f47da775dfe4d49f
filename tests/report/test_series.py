"""The report's series names (toolturn.report.series): the protocol after its mark only on a run
of several protocols, said once in a paired series' name; the panels of a row per protocol."""

from __future__ import annotations

from toolturn.metrics.summary import SummaryRow
from toolturn.report.series import (
    difference_name,
    label_parts,
    panel_rows,
    protocol_groups,
    series_label,
)


def test_a_series_names_its_protocol_only_when_the_run_has_several() -> None:
    assert series_label("default", "streaming", "openai-chat", split=False) == "streaming"
    named = series_label("codex", "serial", "openai-chat", split=True)
    assert named == "serial [codex] · openai-chat"
    assert label_parts("serial [codex] · openai-chat") == ("serial [codex]", "openai-chat")
    assert label_parts("serial [codex]") == ("serial [codex]", None)


def test_a_paired_series_says_its_protocol_once() -> None:
    assert difference_name("streaming", "serial") == "streaming − serial"
    assert difference_name("streaming · anthropic", "serial · anthropic") == (
        "streaming − serial · anthropic"
    )
    # Never across protocols, but if so, both said in full.
    assert difference_name("streaming · anthropic", "serial · openai-chat") == (
        "streaming · anthropic − serial · openai-chat"
    )


def test_the_series_group_by_protocol_and_panel_rows_skip_absent_series() -> None:
    summary = [
        SummaryRow(f"{policy} · {protocol}", "turns.count", 1.0, "turns", protocol=protocol)
        for protocol in ("anthropic", "openai-chat") for policy in ("streaming", "serial")
    ]
    labels = [row.policy for row in summary]
    groups = protocol_groups(labels, summary)
    assert groups == [labels[:2], labels[2:]]
    assert protocol_groups(["streaming"], [SummaryRow("streaming", "m", 1.0, "u")]) == [
        ["streaming"]
    ]
    present = set(labels) - {"serial · openai-chat"}
    assert panel_rows([(0, 1.0), (1, 2.0)], groups, present) == [
        (0, 1.0, labels[:2]), (0, 1.0, labels[2:3]), (1, 2.0, labels[:2]), (1, 2.0, labels[2:3]),
    ]
