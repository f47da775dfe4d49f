"""The summary's numbers about session-level faults (crashes, rewinds, compaction: issue 22), from
the run tables of one arm at one load level.

A run whose sessions never crashed, rewound or compacted has none of these rows (`ran`), so the
summaries of runs without session faults are as they were. Definitions (rates per 1,000 rows of
`requests`, the summary's denominator):

- ``repairs_by_cause_per_1k_requests.<cause>`` (``crash``, ``rewind``, ``compaction``): repairs
  whose ``cause`` is that; the repairs by kind are ``repairs_per_1k_requests.<kind>``.
- ``refused_without_repair_per_1k_requests``: requests with at least one repair, i.e. requests
  whose transcript failed the pairing check before the boundary repair: the API would have
  refused each with a 400 without the boundary layer.
- ``calls_lost_per_1k_requests``: tool calls started before a crash whose results never reached
  the persisted transcript (``sessions.n_calls_lost``): their work is gone, and a model that
  sees them unanswered asks for them again.
- ``compactions.count``; ``sessions.broken_transcript``: sessions strict mode stopped because a
  resumed transcript broke the pairing rules (each counted, the run goes on).
- ``crash_to_request_ns.mean`` / ``.p50`` / ``.count``: from a crash (the end of the turn it
  killed) to the resumed session's first request (the next turn's ``request_sent_ns``), over the
  crashes followed by one.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sim.metrics.percentiles import percentiles

CAUSES = ("crash", "rewind", "compaction")
BROKEN_TRANSCRIPT = "broken_transcript"
# Turn outcomes that only session faults produce.
_FAULT_OUTCOMES = ("crash", "rewind")
PER_1K = "per 1k requests"

# (metric, value, unit)
Metric = tuple[str, float, str]


def ran(tables: Mapping[str, pa.Table]) -> bool:
    """Whether any session of the run crashed, rewound or was compacted."""
    return ran_in_turns(tables["turns"]) or ran_in_sessions(tables["sessions"])


def ran_in_turns(turns: pa.Table) -> bool:
    """Whether any of these turns ended in a crash or a rewind."""
    outcomes = _strings(turns["outcome"])
    return bool(pc.any(pc.is_in(outcomes, pa.array(_FAULT_OUTCOMES))).as_py())


def ran_in_sessions(sessions: pa.Table) -> bool:
    """Whether any of these sessions was compacted or stopped on a broken transcript."""
    return bool(
        (pc.sum(sessions["n_compactions"]).as_py() or 0) > 0
        or pc.any(pc.equal(_strings(sessions["outcome"]), BROKEN_TRANSCRIPT)).as_py()
    )


def fault_metrics(tables: Mapping[str, pa.Table]) -> list[Metric]:
    """The rows of one arm at one level (see the module docstring)."""
    requests = tables["requests"].num_rows
    repairs, sessions = tables["repairs"], tables["sessions"]
    rows: list[Metric] = []
    if requests:
        causes = _strings(repairs["cause"])
        for cause in CAUSES:
            count = pc.sum(pc.equal(causes, cause)).as_py() or 0
            rows.append((f"repairs_by_cause_per_1k_requests.{cause}", count * 1000 / requests,
                         PER_1K))
        refused = len({
            (session, request) for session, request in zip(
                repairs["session_id"].to_pylist(), repairs["request_index"].to_pylist(),
                strict=True,
            )
        })
        rows.append(("refused_without_repair_per_1k_requests", refused * 1000 / requests, PER_1K))
        lost = pc.sum(sessions["n_calls_lost"]).as_py() or 0
        rows.append(("calls_lost_per_1k_requests", lost * 1000 / requests, PER_1K))
    compactions = pc.sum(sessions["n_compactions"]).as_py() or 0
    rows.append(("compactions.count", float(compactions), "compactions"))
    broken = pc.sum(pc.equal(_strings(sessions["outcome"]), BROKEN_TRANSCRIPT)).as_py() or 0
    rows.append(("sessions.broken_transcript", float(broken), "sessions"))
    waits = crash_waits_ns(tables["turns"])
    if waits.size:
        rows.append(("crash_to_request_ns.mean", float(waits.mean()), "ns"))
        rows.append(("crash_to_request_ns.p50", float(percentiles(waits, [50.0])[0]), "ns"))
    rows.append(("crash_to_request_ns.count", float(waits.size), "crashes"))
    return rows


def crash_waits_ns(turns: pa.Table) -> np.ndarray:
    """For each crashed turn followed by a turn of its session: the next turn's request_sent_ns
    minus the crashed turn's end."""
    sent = {
        (session, turn): at for session, turn, at in zip(
            turns["session_id"].to_pylist(), turns["turn_index"].to_pylist(),
            turns["request_sent_ns"].to_pylist(), strict=True,
        )
    }
    waits = [
        sent[session, turn + 1] - end
        for session, turn, end, outcome in zip(
            turns["session_id"].to_pylist(), turns["turn_index"].to_pylist(),
            turns["turn_end_ns"].to_pylist(), _strings(turns["outcome"]).to_pylist(),
            strict=True,
        )
        if outcome == "crash" and (session, turn + 1) in sent
    ]
    return np.array(sorted(waits), dtype=np.int64)


def _strings(column: pa.ChunkedArray) -> pa.ChunkedArray:
    if pa.types.is_dictionary(column.type):
        return column.cast(column.type.value_type)
    return column
