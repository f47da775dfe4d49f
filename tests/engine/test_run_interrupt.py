"""`toolturn run --jobs 2` (and `--backend dask`) stopped by Ctrl-C (SIGINT to the process group, as
a terminal sends it) or by SIGTERM to the main process: it ends within seconds with status 130, no
traceback from any process, no worker left running and nothing written. Killed by SIGKILL, its
workers exit on their own, at once and without a word."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "default.toml"

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/task").is_dir(), reason="finds the workers through Linux's /proc"
)


def assert_one_interrupted_line(err: str) -> None:
    """Nothing on stderr but the run's one line: interrupted, and what --resume would keep."""
    assert err.startswith("toolturn run: interrupted"), err
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "--resume" in err, err


def children_of(pid: int) -> set[int]:
    found = set()
    for children in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(FileNotFoundError):  # ended since listed
            found.update(int(child) for child in children.read_text().split())
    return found


def workers_of(pid: int) -> set[int]:
    """The worker processes of `pid`: the children of its forkserver (not the server itself, nor
    multiprocessing's resource tracker)."""
    found = set()
    for child in children_of(pid):
        try:
            if b"forkserver" in Path(f"/proc/{child}/cmdline").read_bytes():
                found.update(children_of(child))
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
        [sys.executable, "-m", "toolturn.cli", "run", str(SCENARIO), "--sessions", "2000",
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
    assert_one_interrupted_line(err)
    assert not any(running(worker) for worker in workers)
    assert list(tmp_path.iterdir()) == []


def started_run(tmp_path: Path, stderr: object) -> tuple[subprocess.Popen[str], set[int]]:
    """`toolturn run --jobs 2` of a long run, once both of its workers exist."""
    process = subprocess.Popen(
        [sys.executable, "-m", "toolturn.cli", "run", str(SCENARIO), "--sessions", "2000",
         "--jobs", "2", "--out", str(tmp_path / "run")],
        stdout=subprocess.DEVNULL, stderr=stderr, text=True, cwd=ROOT, start_new_session=True,
    )
    deadline = time.monotonic() + 30
    while len(workers := workers_of(process.pid)) < 2:
        if process.poll() is not None or time.monotonic() > deadline:
            os.killpg(process.pid, signal.SIGKILL)
            raise AssertionError(f"no workers started (status {process.wait()})")
        time.sleep(0.05)
    return process, workers


def test_every_worker_starts_with_sigint_blocked(tmp_path: Path) -> None:
    # The first worker's start also starts multiprocessing's resource tracker, which unblocked
    # SIGINT on the way: that worker then took a Ctrl-C as a KeyboardInterrupt traceback.
    process, workers = started_run(tmp_path, subprocess.DEVNULL)
    try:
        blocked = {}
        for worker in workers:
            status = Path(f"/proc/{worker}/status").read_text()
            (mask,) = [line.split()[1] for line in status.splitlines() if line.startswith("SigBlk")]
            blocked[worker] = bool(int(mask, 16) & (1 << (signal.SIGINT - 1)))
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert all(blocked.values()), blocked


def test_workers_of_a_killed_run_exit_promptly_and_quietly(tmp_path: Path) -> None:
    # SIGKILL reaches the parent alone and no handler of its sees it: the workers are orphans.
    # Each must notice and exit without a word (they printed BrokenPipeError tracebacks).
    log = tmp_path / "stderr"
    with log.open("w") as stderr:
        process, workers = started_run(tmp_path, stderr)
        try:
            time.sleep(0.5)  # into the workers' start-up or their simulation: either must be clean
            process.kill()
            process.wait()
            deadline = time.monotonic() + 15
            while any(running(worker) for worker in workers) and time.monotonic() < deadline:
                time.sleep(0.05)
            left = [worker for worker in workers if running(worker)]
        finally:
            with contextlib.suppress(ProcessLookupError):  # the group may be gone already
                os.killpg(process.pid, signal.SIGKILL)
    assert left == []
    # The parent may have logged its progress before it was killed; nothing else may be there.
    lines = log.read_text().splitlines()
    pattern = r"toolturn run: [\d,]+/[\d,]+ sessions .*"
    assert all(re.fullmatch(pattern, line) for line in lines), lines


def group_members(pgid: int) -> set[int]:
    """The live processes of process group `pgid`."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):  # ended since listed
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.add(int(stat.parent.name))
    return found


def test_ctrl_c_on_the_dask_backend_stops_its_cluster_and_writes_nothing(tmp_path: Path) -> None:
    # The run's own LocalCluster: its nanny and worker processes are in the run's process
    # group, so the Ctrl-C reaches them too; all must be gone, the parts folder with them.
    pytest.importorskip("distributed")
    out = tmp_path / "run"
    process = subprocess.Popen(
        [sys.executable, "-m", "toolturn.cli", "run", str(SCENARIO), "--sessions", "2000",
         "--backend", "dask", "--jobs", "2", "--no-report", "--out", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        start_new_session=True,
    )
    parts = tmp_path / ".run.parts"
    try:
        deadline = time.monotonic() + 120  # the cluster's start on a busy host
        # Mid-run: a task has begun writing its parts (so the cluster's workers are up).
        while not (parts.is_dir() and any(child.is_dir() for child in parts.iterdir())):
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"no task started: {process.communicate(timeout=10)}")
            time.sleep(0.05)
        members = group_members(process.pid)
        os.killpg(process.pid, signal.SIGINT)
        _, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert len(members) >= 3  # the run, a nanny and a worker at least
    assert process.returncode == 130
    # Nothing but sim's own line: the cluster's workers never see the Ctrl-C (forked with
    # SIGINT blocked); one that took it printed its CancelledError traceback as the cluster
    # closed, in about one run in four.
    assert_one_interrupted_line(err)
    deadline = time.monotonic() + 15
    while (left := group_members(process.pid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    if left:
        os.killpg(process.pid, signal.SIGKILL)  # not to leave them to the rest of the suite
    assert left == set()
    assert list(tmp_path.iterdir()) == []
