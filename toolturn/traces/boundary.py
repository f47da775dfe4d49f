"""What the API-boundary repair would change on each request a log's history implies.

For every step that reached the model, its request's messages (as the reader rebuilt them, see
`toolturn.traces.logged.Step.messages`) go through `check_pairing` (the violations the API would
answer 400 to) and `ensure_tool_result_pairing` (the repairs `toolturn.runtime.repair` would make).
Each finding keeps the log line of its step and the message index in the repaired request, so that a
user can open the log at the place. A request that is not a transcript at all (a message without
a role, ...) is a finding of kind `not_a_transcript`. A step whose log keeps no messages (a
`toolturn serve --record` folder) adds the server's own violation count and no findings, and is left
out of `per_1000_requests` (`without_history` counts such requests).
"""

from __future__ import annotations

from dataclasses import dataclass

from toolturn.runtime.pairing import TranscriptShapeError
from toolturn.runtime.repair import check_pairing, ensure_tool_result_pairing
from toolturn.traces.logged import LoggedSession

NOT_A_TRANSCRIPT = "not_a_transcript"


@dataclass(frozen=True, slots=True)
class Finding:
    where: str  # file:line of the step whose request it is
    session_id: str
    request_index: int  # the step's index in its session, from 0
    kind: str  # a RepairKind value, or NOT_A_TRANSCRIPT
    message_index: int | None
    tool_use_id: str | None


@dataclass(slots=True)
class BoundaryReport:
    requests: int
    violations: int
    findings: list[Finding]
    without_history: int = 0

    def by_kind(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for finding in self.findings:
            counts[finding.kind] = counts.get(finding.kind, 0) + 1
        return dict(sorted(counts.items()))

    def per_1000_requests(self) -> dict[str, float]:
        with_history = self.requests - self.without_history
        if not with_history:
            return {}
        return {kind: 1000.0 * n / with_history for kind, n in self.by_kind().items()}


def boundary_report(sessions: list[LoggedSession]) -> BoundaryReport:
    requests = violations = without_history = 0
    findings: list[Finding] = []
    for session in sessions:
        for index, step in enumerate(session.steps):
            requests += 1
            if step.server_violations is not None:
                violations += step.server_violations
                without_history += 1
                continue
            try:
                violations += len(check_pairing(step.messages))
                _repaired, repairs = ensure_tool_result_pairing(step.messages)
            except TranscriptShapeError:
                violations += 1
                findings.append(
                    Finding(step.where, session.session_id, index, NOT_A_TRANSCRIPT, None, None)
                )
                continue
            findings.extend(
                Finding(
                    step.where, session.session_id, index, str(repair.kind),
                    repair.message_index, repair.tool_use_id,
                )
                for repair in repairs
            )
    return BoundaryReport(requests, violations, findings, without_history)
