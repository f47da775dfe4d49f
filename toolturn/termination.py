"""SIGTERM handled as Ctrl-C is, for the commands that write a run folder (`toolturn run`, `toolturn
live`, `toolturn fidelity`): a `kill` stops their work the same clean way, nothing left half
written."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """While inside, SIGTERM raises KeyboardInterrupt; the previous handler comes back after."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
