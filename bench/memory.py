"""Peak memory against sessions: `toolturn run SCENARIO --no-report --sessions N` for each N, one
process each, its peak resident set size (the kernel's count, `ru_maxrss` of the finished child)
and its wall time, and the ratio of each peak to the first one's (issue 19: at most 1.25 from
1,000 to 20,000 sessions of the default scenario). Each row also has the host's one-minute load
average before and after the run (this is a shared machine: wall times move with it) and the
commit measured.

    python bench/memory.py                      # 1,000 and 20,000 sessions of the default scenario
    python bench/memory.py --sessions 1000 5000 100000 --jobs 2 --json results/memory.json

Not part of `make test`: 20,000 sessions take tens of minutes on this machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def measure(scenario: str, sessions: int, jobs: int) -> dict[str, float]:
    """One run in a child process: its peak RSS in MB (the largest process: the parent or a
    worker, as `ru_maxrss` of RUSAGE_CHILDREN is) and its wall seconds."""
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as scratch:
        command = [
            sys.executable, "-m", "toolturn.cli", "run", scenario, "--no-report", "--quiet",
            "--sessions", str(sessions), "--jobs", str(jobs), "--out", f"{scratch}/run",
        ]
        start = time.perf_counter()
        # A fresh child per run: ru_maxrss of RUSAGE_CHILDREN is the largest child so far, so
        # each run is measured by a process of its own that reports its own children.
        probe = (
            "import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, "
            "stdout=subprocess.DEVNULL); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
        )
        out = subprocess.run(
            [sys.executable, "-c", probe, *command], check=True, capture_output=True, text=True,
            cwd=ROOT, env={**os.environ, "PYTHONHASHSEED": "0"},
        )
        wall = time.perf_counter() - start
    return {"sessions": sessions, "peak_rss_mb": int(out.stdout.split()[-1]) / 1024,
            "wall_s": wall, "load_before": load_before, "load_after": os.getloadavg()[0]}


def commit() -> str | None:
    """The checkout's commit (with `+` when it has changes), or None outside git."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=ROOT, check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+" if dirty.strip() else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="scenarios/default.toml")
    parser.add_argument("--sessions", type=int, nargs="+", default=[1000, 20000])
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write the rows here as JSON")
    args = parser.parse_args()
    assert resource.RUSAGE_CHILDREN  # POSIX only
    rows: list[dict[str, Any]] = []
    measured = commit()
    print(f"commit {measured}, --jobs {args.jobs}, {args.scenario}", flush=True)
    for sessions in args.sessions:
        row: dict[str, Any] = {**measure(args.scenario, sessions, args.jobs),
                                  "commit": measured, "jobs": args.jobs}
        first = rows[0] if rows else row
        row["ratio_to_first"] = row["peak_rss_mb"] / first["peak_rss_mb"]
        rows.append(row)
        print(
            f"{sessions:>8,} sessions  peak {row['peak_rss_mb']:7.1f} MB  "
            f"({row['ratio_to_first']:.2f}x the first)  wall {row['wall_s']:8.1f} s  "
            f"load {row['load_before']:.1f} -> {row['load_after']:.1f}",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
