"""How a task on a cluster's worker reports its sessions finished as it goes: a `Reporter`
(picklable: it travels with the task) sends (task index, sessions finished) at most every
`REPORT_EVERY_S` (its result carries the final count), and the runner reads them off the
backend's `Channel`."""

from __future__ import annotations

import contextlib
import queue
import time
from collections.abc import Callable

__all__ = ["REPORT_EVERY_S", "Channel", "Reporter", "drainer"]

# A task's progress goes out at most this often (seconds): enough for a bar, few messages.
REPORT_EVERY_S = 0.2


class Reporter:
    """A task's progress callback in a worker (picklable: it travels with the task): sends
    (task index, sessions finished) through `send`, at most every `REPORT_EVERY_S`."""

    def __init__(self, send: Callable[[list[int]], None], index: int) -> None:
        self._send = send
        self._index = index
        self._last: float | None = None  # the first report goes at once

    def __call__(self, finished: int) -> None:
        now = time.monotonic()
        if self._last is None or now - self._last >= REPORT_EVERY_S:
            self._last = now
            self._send([self._index, finished])


class Channel:
    """Where the tasks' `Reporter`s send and the runner reads: `drain` returns the
    (task index, sessions finished) sent since the last call, oldest first."""

    def __init__(
        self, send: Callable[[list[int]], None], drain: Callable[[], list[list[int]]]
    ) -> None:
        self._send = send
        self._drain = drain

    def reporter(self, index: int) -> Reporter:
        return Reporter(self._send, index)

    def drain(self) -> list[tuple[int, int]]:
        return [(index, finished) for index, finished in self._drain()]


def drainer(inbox: queue.SimpleQueue[list[int]]) -> Callable[[], list[list[int]]]:
    def drain() -> list[list[int]]:
        messages = []
        with contextlib.suppress(queue.Empty):
            while True:
                messages.append(inbox.get_nowait())
        return messages

    return drain
