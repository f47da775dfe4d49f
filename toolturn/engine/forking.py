"""Worker processes forked from multiprocessing's forkserver: started once per process with the
modules its workers need already imported, and with SIGINT blocked.

Used by the local pool (`toolturn.engine.backends.local`) and by the Dask cluster made for a
run (`toolturn.engine.backends.dask`), for the same two reasons:

1. Start-up. A spawned worker imports the engine again (about 1.3 s of CPU each, the cost that ate
   `--jobs 2`'s gain); the server imports the preloaded modules once, and each worker is a fork of
   it, ready in milliseconds. Later runs of the same process reuse the server.
2. Ctrl-C. A terminal's Ctrl-C reaches the whole process group. The server is started with SIGINT
   blocked and forked processes keep their parent's mask, so the server and every worker never
   see it: the run's own process alone acts on it and stops them. Blocking SIGINT around a
   worker's start is not enough where another thread starts it (Dask's nannies start worker
   processes from the cluster's event-loop thread, whose mask is its own): the server's mask
   holds whichever thread asks it for a process.

Not plain fork: the parent is not a clean process to copy. It has native threads (pyarrow's
jemalloc background thread, OpenBLAS's pool: Python 3.12 warns that forking such a process may
deadlock the child, and a run must never hang), SIGTERM handled as an interrupt
(`toolturn.termination`: a forked worker would take `terminate()` for a Ctrl-C and print a
traceback), and, embedded, whatever its host holds (an in-process Dask cluster's threads and
sockets in the tests). The server is a fresh, single-threaded process; it is also Python
3.14's default start method on Linux. A platform without a forkserver (Windows) gets spawn, with
SIGINT blocked around each start. The server lives as long as the process that started it
(later runs reuse it) and ends with it, reaped.
"""

from __future__ import annotations

import atexit
import contextlib
import multiprocessing
import os
import signal
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from multiprocessing import forkserver, resource_tracker
from multiprocessing.context import ForkServerContext, SpawnContext


def worker_context(preload: Sequence[str]) -> ForkServerContext | SpawnContext:
    """The forkserver context, its server running with SIGINT blocked and `preload` (module
    names) imported; spawn on a platform without one. A server already running (an earlier run
    of this process started it) is kept as it is, with the modules it preloaded."""
    # Started first, on its own: starting it unblocks SIGINT (bpo-33613's mask, lifted after
    # the tracker is spawned), which would open the server's (or a spawned worker's) mask.
    _quiet_tracker()
    resource_tracker.ensure_running()
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(preload))
    with sigint_blocked():
        forkserver.ensure_running()
    atexit.unregister(_stop_server)  # once, however many runs started or met the server
    atexit.register(_stop_server)
    return context


# The resource tracker's warning that a process died holding semaphores. A run killed by SIGKILL
# leaves it the semaphores its Dask cluster's nannies made (distributed's, about six a worker),
# which it unlinks, as it is there to do, and then printed "There appear to be 12 leaked
# semaphore objects" on the run's stderr: the cleanup working, reported as a fault (#29).
_TRACKER_WARNING = "ignore::UserWarning:multiprocessing.resource_tracker"


def _quiet_tracker() -> None:
    """The tracker this process starts without that warning: it takes this process's warning
    options as its command line's (`-W`), so the option is added before it starts; this
    process's own filters are set already and do not change."""
    if _TRACKER_WARNING not in sys.warnoptions:
        sys.warnoptions.append(_TRACKER_WARNING)


def _stop_server() -> None:
    """Ends the server and the resource tracker with this process, and reaps them. Left to
    themselves they end a moment after this process (when their pipes from here close):
    processes of the run left behind, the server's CPU time and its workers' (it reaps them)
    never counted in this process's. Through multiprocessing's private handles on them (`_stop`,
    what its own tests use: there is no public one); the server killed first, so that one still
    importing its preload does not hold the exit up."""
    server = getattr(forkserver, "_forkserver", None)
    pid = getattr(server, "_forkserver_pid", None)
    if server is not None and pid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        server._stop()
    tracker = getattr(resource_tracker, "_resource_tracker", None)
    if tracker is not None:
        tracker._stop()


@contextmanager
def sigint_blocked() -> Iterator[None]:
    """SIGINT blocked in this thread while it starts a process, which inherits the mask (through
    fork and exec) and keeps it. A SIGINT meanwhile is not lost: it waits until the block ends
    (or goes to another thread of this process)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
