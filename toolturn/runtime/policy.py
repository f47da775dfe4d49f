"""Executor policies: when a queued tool call may start.

One interface, three strategies. Every policy keeps arrival order (a call that may not start
holds back every call after it) and differs only in two switches:

- `streaming`: a call may start as soon as its block completes, while the model still speaks.
- `at_message_stop`: the same concurrency rule, but nothing starts until the message has ended
  (the naive baseline: what a runtime does that waits for the whole response).
- `serial`: one call at a time, after the message has ended (the slowest baseline).

Concurrency rule (`streaming`, `at_message_stop`): a call starts when nothing is executing, or
when it and everything executing are concurrency-safe.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class ExecutorPolicy(str, Enum):
    """When calls start: as each block completes, after the message ends, or one at a time
    after it (the words of DESIGN section 4)."""

    STREAMING = "streaming"
    AT_MESSAGE_STOP = "at_message_stop"
    SERIAL = "serial"


@dataclass(frozen=True, slots=True)
class Admission:
    """The admission test of one policy."""

    waits_for_message_end: bool
    one_at_a_time: bool

    def may_start(
        self, *, safe: bool, executing: int, executing_unsafe: int, message_ended: bool
    ) -> bool:
        """Whether the call at the head of the queue may start now."""
        if self.waits_for_message_end and not message_ended:
            return False
        if executing == 0:
            return True
        if self.one_at_a_time:
            return False
        return safe and executing_unsafe == 0


_ADMISSION = {
    ExecutorPolicy.STREAMING: Admission(waits_for_message_end=False, one_at_a_time=False),
    ExecutorPolicy.AT_MESSAGE_STOP: Admission(waits_for_message_end=True, one_at_a_time=False),
    ExecutorPolicy.SERIAL: Admission(waits_for_message_end=True, one_at_a_time=True),
}


def admission_for(policy: ExecutorPolicy | str) -> Admission:
    """The admission test of a policy, given as the enum or its string value."""
    return _ADMISSION[policy if type(policy) is ExecutorPolicy else ExecutorPolicy(policy)]
