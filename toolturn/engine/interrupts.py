"""A Ctrl-C (or SIGTERM, which `toolturn.termination` makes one) held back while something must
not be cut in the middle: the start of a Dask cluster, whose half-started nannies and workers
cannot be closed (distributed asserts on their state and prints a traceback per process, and its
atexit hook tries again). The first signal is kept and raised as KeyboardInterrupt once the
block is done, where the cluster is whole and closes cleanly; a second one raises at once, so
a start that hangs can still be broken off."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["interrupts_deferred"]

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """While inside, the first SIGINT or SIGTERM is held and raised as KeyboardInterrupt on
    leaving; a second raises at once. Off the main thread (where no handler can be set) it
    holds nothing back."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        if held:
            raise KeyboardInterrupt
        held.append(signum)

    previous = {signum: signal.signal(signum, hold) for signum in _SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if held:
        raise KeyboardInterrupt
