"""What the exceptions that stop a session carry (`toolturn.engine.bounds.SessionRunaway`,
`toolturn.engine.strict.StrictModeStop`): which session, of which seed, policy and profile,
when in simulated time, and why. The fields are the exception's positional args, because
simpy re-raises a failed process's exception as `type(error)(*error.args)` and pickling (from
a worker process) does the same."""

from __future__ import annotations

__all__ = ["StoppedSession"]


class StoppedSession(Exception):
    """A session stopped at `time_ns` for `detail`."""

    def __init__(
        self, seed: int, session_id: int, policy: str, time_ns: int, detail: str,
        profile: str = "default",
    ) -> None:
        # Exception's own __init__ (not a subclass's, such as UserError's): `args` must be
        # these fields to unpickle.
        Exception.__init__(self, seed, session_id, policy, time_ns, detail, profile)
        self.seed = seed
        self.session_id = session_id
        self.policy = policy
        self.time_ns = time_ns
        self.detail = detail
        self.profile = profile
