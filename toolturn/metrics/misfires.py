"""How often speculative starts misfire: the summary rows of a Chat Completions arm under
``chat_start = "at_parsed_json"`` (`toolturn.runtime.protocol_timing`).

A misfire is a call started when its arguments first parsed as a JSON object whose arguments then
changed (`turns.misfires`). Per arm and load level the summary gets ``misfires.count`` and
``misfires.per_1k_calls`` (per 1,000 tool calls of the arm's turns). Only arms on
``openai-chat`` get them: on the other protocols a call is never started before it is known
complete, so the rows would say nothing (and a run without them keeps its summary rows).

The counts are folded from the turns' rows in any number of pieces (a whole table in memory, or a
run folder's row groups), so both summary paths share this one fold.
"""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa

from toolturn.metrics.summary_row import SummaryRow

__all__ = ["CHAT", "READ", "misfire_rate", "misfire_rows"]

CHAT = "openai-chat"
# The columns of turns the fold reads.
READ = ("profile", "policy", "load_level", "load", "misfires", "n_tool_calls")


def misfire_rows(turns: Iterable[pa.Table], protocol: str) -> list[SummaryRow]:
    """The misfire rows of the arms in `turns` (pieces of one protocol's turns, `READ` columns),
    in arm order (level, profile, policy); none off Chat Completions."""
    if protocol != CHAT:
        return []
    # (level, profile, policy) -> [misfires, calls]; and each level's load.
    sums: dict[tuple[int, str, str], list[float]] = {}
    loads: dict[int, float | None] = {}
    for piece in turns:
        plain = pa.table({name: _plain(piece[name]) for name in READ})
        grouped = plain.group_by(["load_level", "load", "profile", "policy"]).aggregate(
            [("misfires", "sum"), ("n_tool_calls", "sum")]
        )
        for entry in grouped.to_pylist():
            level = int(entry["load_level"])
            loads[level] = entry["load"]
            total = sums.setdefault((level, str(entry["profile"]), str(entry["policy"])), [0, 0])
            total[0] += float(entry["misfires_sum"] or 0)
            total[1] += float(entry["n_tool_calls_sum"] or 0)
    rows = []
    for (level, profile, policy), (count, calls) in sorted(sums.items()):
        rate = 1000.0 * count / calls if calls else 0.0
        for metric, value, unit in (("misfires.count", count, "calls"),
                                    ("misfires.per_1k_calls", rate, "per 1k calls")):
            rows.append(SummaryRow(policy, metric, value, unit, load_level=level,
                                   load=loads[level], profile=profile, protocol=protocol))
    return rows


def _plain(column: pa.ChunkedArray) -> pa.ChunkedArray:
    if pa.types.is_dictionary(column.type):
        return column.cast(column.type.value_type)
    return column


def misfire_rate(rows: Iterable[SummaryRow], policy: str) -> float | None:
    """The arm `policy`'s misfires per 1,000 calls among `rows` (one level), if it has the row."""
    for row in rows:
        if row.policy == policy and row.metric == "misfires.per_1k_calls":
            return row.value
    return None
