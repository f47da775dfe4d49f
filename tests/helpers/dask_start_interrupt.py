"""`toolturn run ARGS...` with a Ctrl-C (SIGINT to the process group, as a terminal sends it)
in the middle of its Dask cluster's start: as the first nanny starts, from the cluster's
event-loop thread, while the run's main thread waits for the cluster (issue 29: a traceback per
half-started process, then distributed's atexit hook failing to close them)."""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import distributed

from toolturn.cli import main

_start = distributed.Nanny.start_unsafe
_sent: list[bool] = []


async def start_interrupted(self: Any) -> Any:
    if not _sent:
        _sent.append(True)
        os.killpg(os.getpgrp(), signal.SIGINT)
    return await _start(self)


if __name__ == "__main__":
    distributed.Nanny.start_unsafe = start_interrupted  # type: ignore[method-assign]
    sys.exit(main(sys.argv[1:]))
