"""`sim run --jobs 2` stopped by Ctrl-C (SIGINT to the process group, as a terminal sends it) or
by SIGTERM to the main process: it ends within seconds with status 130, no traceback from any
process, no worker left running and nothing written."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "scenarios" / "default.toml"

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/task").is_dir(), reason="finds the workers through Linux's /proc"
)


def workers_of(pid: int) -> set[int]:
    """The worker processes `pid` spawned (not multiprocessing's resource tracker)."""
    found = set()
    for children in Path(f"/proc/{pid}/task").glob("*/children"):
        for child in children.read_text().split():
            try:
                if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                    found.add(int(child))
            except FileNotFoundError:  # ended since listed
                continue
    return found


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


@pytest.mark.parametrize("stop", ["ctrl-c", "sigterm"])
def test_an_interrupted_parallel_run_ends_promptly_and_cleanly(tmp_path: Path, stop: str) -> None:
    out = tmp_path / "run"
    process = subprocess.Popen(
        [sys.executable, "-m", "sim.cli", "run", str(SCENARIO), "--sessions", "2000",
         "--jobs", "2", "--out", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while len(workers := workers_of(process.pid)) < 2:
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"no workers started: {process.communicate(timeout=10)}")
            time.sleep(0.05)
        time.sleep(0.5)  # into the workers' start-up or their simulation: either must be clean
        if stop == "ctrl-c":
            os.killpg(process.pid, signal.SIGINT)
        else:
            process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == 130
    assert err == "sim run: interrupted\n"
    assert not any(running(worker) for worker in workers)
    assert list(tmp_path.iterdir()) == []
