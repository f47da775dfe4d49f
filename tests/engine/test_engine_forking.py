"""The worker processes' start (`toolturn.engine.forking`): a run killed by SIGKILL leaves the
resource tracker its semaphores (a Dask cluster's nannies make some), which it cleans up
without printing "leaked semaphore objects" on the run's stderr (issue 29)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

KILLED_HOLDING_A_SEMAPHORE = """
import os, signal
from toolturn.engine.forking import worker_context
context = worker_context([])
held = context.Lock()  # a named semaphore, registered with the resource tracker
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_killed_run_leaves_no_warning_of_leaked_semaphores() -> None:
    # stderr is read to its end: until the tracker and the forkserver, which share it, are gone.
    process = subprocess.run(
        [sys.executable, "-c", KILLED_HOLDING_A_SEMAPHORE],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )
    assert process.returncode == -9
    assert process.stderr == ""
