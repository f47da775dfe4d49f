"""Strict mode's stop: a transcript broke the tool-pairing rules, so the run ends at once."""

from __future__ import annotations

from toolturn.engine.stopped_session import StoppedSession


class StrictModeStop(StoppedSession):
    """Raised out of a simulation in strict mode; the message names what reproduces it (its
    fields: `toolturn.engine.stopped_session`)."""

    def __str__(self) -> str:
        profile = "" if self.profile == "default" else f", profile {self.profile}"
        return (
            f"strict mode: tool pairing broken in session {self.session_id} (seed {self.seed}, "
            f"policy {self.policy}{profile}) at {self.time_ns} ns: {self.detail}"
        )
