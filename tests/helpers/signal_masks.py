"""What a worker process (of a cluster, a pool) runs to say whether SIGINT is blocked in it."""

from __future__ import annotations

import signal


def sigint_blocked() -> bool:
    """Whether SIGINT is blocked in the calling thread (a task's thread: threads start with
    their creator's mask, so the worker process's)."""
    return signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])
