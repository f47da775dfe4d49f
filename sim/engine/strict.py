"""Strict mode's stop: a transcript broke the tool-pairing rules, so the run ends at once."""

from __future__ import annotations

from typing import Any


class StrictModeStop(Exception):
    """Raised out of a simulation in strict mode; the message names what reproduces it."""

    def __init__(self, *, seed: int, session_id: int, policy: str, time_ns: int, detail: str) -> None:
        self.seed = seed
        self.session_id = session_id
        self.policy = policy
        self.time_ns = time_ns
        self.detail = detail
        super().__init__(
            f"strict mode: tool pairing broken in session {session_id} (seed {seed}, policy "
            f"{policy}) at {time_ns} ns: {detail}. Reproduce with --seed {seed} --policy {policy}; "
            f"the session is number {session_id}."
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only fields: rebuild from them when the stop crosses a process boundary.
        fields = {
            "seed": self.seed, "session_id": self.session_id, "policy": self.policy,
            "time_ns": self.time_ns, "detail": self.detail,
        }
        return (_rebuild, (fields,))


def _rebuild(fields: dict[str, Any]) -> StrictModeStop:
    return StrictModeStop(**fields)
