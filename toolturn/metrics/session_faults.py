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

from collections import Counter
from collections.abc import Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from toolturn.metrics.percentiles import percentiles

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


class FaultFold:
    """The numbers of the module docstring from one arm's rows at one level, folded group of
    rows by group (`toolturn.metrics.arm_fold`, rule 2): the crash waits take a second pass over
    the turns, `add_next_turns`, after every group went through `add`."""

    def __init__(self) -> None:
        self.causes: Counter[str] = Counter()
        self.refused: set[tuple[int, int]] = set()
        self.calls_lost = 0
        self.compactions = 0
        self.broken = 0
        # (session, next turn, end of the crashed turn) of every crashed turn.
        self._crashes: list[tuple[int, int, int]] = []
        # The request_sent_ns of the turns that follow a crash.
        self._sent: dict[tuple[int, int], int] = {}

    def add(self, name: str, group: pa.Table) -> None:
        """Rows of table `name`."""
        if name == "repairs":
            causes = _strings(group["cause"])
            for cause in CAUSES:
                self.causes[cause] += pc.sum(pc.equal(causes, cause)).as_py() or 0
            self.refused.update(zip(
                group["session_id"].to_pylist(), group["request_index"].to_pylist(), strict=True
            ))
        elif name == "sessions":
            self.calls_lost += pc.sum(group["n_calls_lost"]).as_py() or 0
            self.compactions += pc.sum(group["n_compactions"]).as_py() or 0
            outcomes = _strings(group["outcome"])
            self.broken += pc.sum(pc.equal(outcomes, BROKEN_TRANSCRIPT)).as_py() or 0
        elif name == "turns":
            crashed = group.filter(pc.equal(_strings(group["outcome"]), "crash"))
            self._crashes += [
                (session, turn + 1, end) for session, turn, end in zip(
                    crashed["session_id"].to_pylist(), crashed["turn_index"].to_pylist(),
                    crashed["turn_end_ns"].to_pylist(), strict=True,
                )
            ]

    @property
    def needs_next_turns(self) -> bool:
        """Whether a turn crashed, so the crash waits need `add_next_turns`."""
        return bool(self._crashes)

    def add_next_turns(self, group: pa.Table) -> None:
        """Turns again (session_id, turn_index, request_sent_ns), for the crash waits."""
        sessions = pa.array(
            sorted({session for session, _, _ in self._crashes}), group["session_id"].type
        )
        mine = group.filter(pc.is_in(group["session_id"], value_set=sessions))
        wanted = {(session, turn) for session, turn, _ in self._crashes}
        for session, turn, at in zip(
            mine["session_id"].to_pylist(), mine["turn_index"].to_pylist(),
            mine["request_sent_ns"].to_pylist(), strict=True,
        ):
            if (session, turn) in wanted:
                self._sent[session, turn] = at

    def crash_waits_ns(self) -> np.ndarray:
        """For each crashed turn followed by a turn of its session: the next turn's
        request_sent_ns minus the crashed turn's end, sorted."""
        waits = [
            self._sent[session, turn] - end
            for session, turn, end in self._crashes
            if (session, turn) in self._sent
        ]
        return np.array(sorted(waits), dtype=np.int64)

    def metrics(self, requests: int) -> list[Metric]:
        """The rows of the arm, given its rows of `requests` (see the module docstring)."""
        rows: list[Metric] = []
        if requests:
            for cause in CAUSES:
                rows.append((f"repairs_by_cause_per_1k_requests.{cause}",
                             self.causes[cause] * 1000 / requests, PER_1K))
            rows.append(("refused_without_repair_per_1k_requests",
                         len(self.refused) * 1000 / requests, PER_1K))
            rows.append(("calls_lost_per_1k_requests", self.calls_lost * 1000 / requests, PER_1K))
        rows.append(("compactions.count", float(self.compactions), "compactions"))
        rows.append(("sessions.broken_transcript", float(self.broken), "sessions"))
        waits = self.crash_waits_ns()
        if waits.size:
            rows.append(("crash_to_request_ns.mean", float(waits.mean()), "ns"))
            rows.append(("crash_to_request_ns.p50", float(percentiles(waits, [50.0])[0]), "ns"))
        rows.append(("crash_to_request_ns.count", float(waits.size), "crashes"))
        return rows


def crash_waits_ns(turns: pa.Table) -> np.ndarray:
    """`FaultFold.crash_waits_ns` of whole turns."""
    fold = FaultFold()
    fold.add("turns", turns)
    fold.add_next_turns(turns)
    return fold.crash_waits_ns()


def _strings(column: pa.ChunkedArray) -> pa.ChunkedArray:
    if pa.types.is_dictionary(column.type):
        return column.cast(column.type.value_type)
    return column
