"""Strict mode's stop: a transcript broke the tool-pairing rules, so the run ends at once."""

from __future__ import annotations


class StrictModeStop(Exception):
    """Raised out of a simulation in strict mode; the message names what reproduces it.

    The fields are the exception's positional args, because simpy re-raises a failed process's
    exception as `type(error)(*error.args)` and pickling (from a worker process) does the same.
    """

    def __init__(
        self, seed: int, session_id: int, policy: str, time_ns: int, detail: str,
        profile: str = "default",
    ) -> None:
        super().__init__(seed, session_id, policy, time_ns, detail, profile)
        self.seed = seed
        self.session_id = session_id
        self.policy = policy
        self.time_ns = time_ns
        self.detail = detail
        self.profile = profile

    def __str__(self) -> str:
        profile = "" if self.profile == "default" else f", profile {self.profile}"
        return (
            f"strict mode: tool pairing broken in session {self.session_id} (seed {self.seed}, "
            f"policy {self.policy}{profile}) at {self.time_ns} ns: {self.detail}"
        )
