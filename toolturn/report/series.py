"""The series the report's figures draw: one per arm (recovery profile x policy) and, in a run of
several wire protocols, one per arm and protocol, as a protocol's arms never pool with another's.

A series is named by its label: the policy (``streaming``), with its profile when not the default
(``streaming [claude-code]``), and with its protocol after ``PROTOCOL_MARK`` when the run has
several (``streaming · openai-chat``). `by_arm` writes the labels into the policy column of every
table and summary row, so the static figures (``toolturn.report.plots``) and the page's
(``toolturn.report.interactive``) split alike, each figure by the same per-policy code. A run of
one protocol keeps its labels without the mark, so its figures are what they were before
protocols could be swept.
"""

from __future__ import annotations

from dataclasses import replace

import pyarrow as pa

from toolturn.metrics.reader import RunFolder
from toolturn.metrics.summary import PAIRED_PREFIX, SummaryRow, arm_label
from toolturn.metrics.summary_table import ordered_arms, ordered_policies

PROTOCOL_MARK = " · "


def protocols_of(run: RunFolder) -> list[str]:
    """The run's wire protocols, in the summary's order (protocol by protocol, by name)."""
    return list(dict.fromkeys(row.protocol for row in run.summary))


def series_label(profile: str, policy: str, protocol: str, split: bool) -> str:
    """How one arm on one protocol is named: `arm_label`, then the protocol when `split`."""
    label = arm_label(profile, policy)
    return f"{label}{PROTOCOL_MARK}{protocol}" if split else label


def by_arm(run: RunFolder) -> RunFolder:
    """The run with each series (arm, and protocol when the run has several) as a policy of its
    own, named by `series_label`, so every figure shows the series side by side; a run of the
    default profile and one protocol is returned as it is.

    The summary follows the summary table's order (protocol by protocol, then the arms), which
    the figures' legends follow. A paired row's ``versus`` (a baseline policy) gets its protocol
    too, so it names the baseline's series on the same protocol."""
    protocols = protocols_of(run)
    split = len(protocols) > 1
    if not split and all(row.profile == "default" for row in run.summary):
        return run
    tables = {name: _series_as_policies(table, split) for name, table in run.tables.items()}
    rank = {arm: index for index, arm in enumerate(ordered_arms(run.summary))}
    ordered = sorted(run.summary, key=lambda row: (protocols.index(row.protocol), rank[row.arm]))
    summary = [_relabelled(row, split) for row in ordered]
    return replace(run, tables=tables, summary=summary)


def _relabelled(row: SummaryRow, split: bool) -> SummaryRow:
    versus = row.versus
    if split and versus is not None and row.metric.startswith(PAIRED_PREFIX):
        versus = f"{versus}{PROTOCOL_MARK}{row.protocol}"
    return replace(
        row,
        policy=series_label(row.profile, row.policy, row.protocol, split),
        profile="default",
        versus=versus,
    )


def _series_as_policies(table: pa.Table, split: bool) -> pa.Table:
    profiles = table["profile"].to_pylist()
    policies = table["policy"].to_pylist()
    protocols = table["protocol"].to_pylist() if split else [""] * len(profiles)
    labels = [
        series_label(profile, policy, protocol, split)
        for profile, policy, protocol in zip(profiles, policies, protocols, strict=True)
    ]
    for name, column in (("policy", labels), ("profile", ["default"] * len(profiles))):
        encoded = pa.array(column, type=pa.string()).dictionary_encode()
        table = table.set_column(table.schema.get_field_index(name), name, encoded)
    return table


def protocol_groups(policies: list[str], summary: list[SummaryRow]) -> list[list[str]]:
    """`policies` (series labels of a run `by_arm` relabelled) grouped by their protocol, in the
    summary's protocol order and the given order within each: one group for a run of one
    protocol. The paired figures compare series within a group only."""
    protocol = {row.policy: row.protocol for row in summary if row.versus is None}
    order = list(dict.fromkeys(protocol[p] for p in policies if p in protocol))
    return [[p for p in policies if protocol.get(p) == mine] for mine in order]


def panel_rows(
    levels: list[tuple[int, float | None]], groups: list[list[str]], present: set[str]
) -> list[tuple[int, float | None, list[str]]]:
    """The rows of a figure of one panel per series and load level (tool concurrency): a row
    per load level and protocol, of that protocol's series in `present`, in group order."""
    return [
        (level, load, mine)
        for level, load in levels
        for group in groups
        if (mine := [series for series in group if series in present])
    ]


def label_parts(label: str) -> tuple[str, str | None]:
    """A series label's arm label and protocol (None for a run of one protocol)."""
    arm, mark, protocol = label.partition(PROTOCOL_MARK)
    return (arm, protocol) if mark else (label, None)


def difference_name(treatment: str, versus: str) -> str:
    """How the paired series treatment minus versus is named: ``streaming − serial``, or for two
    series of one protocol (of several) with the protocol once: ``streaming − serial ·
    openai-chat``."""
    (mine, protocol), (baseline, theirs) = label_parts(treatment), label_parts(versus)
    if protocol is not None and protocol == theirs:
        return f"{mine} − {baseline}{PROTOCOL_MARK}{protocol}"
    return f"{treatment} − {versus}"


def policies_of(run: RunFolder) -> list[str]:
    """The run's series labels, in the summary table's order (the policy under test first)."""
    return ordered_policies(row.policy for row in run.summary)
