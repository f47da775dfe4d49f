"""Every benchmark runs once, unmeasured (`--benchmark-disable`), so that a change of an API the
benchmarks use breaks the test suite, not only the next `make bench`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_benchmark_runs_once() -> None:
    done = subprocess.run(
        [
            sys.executable, "-m", "pytest", "bench", "--benchmark-disable",
            "-o", "python_files=bench_*.py",
        ],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    # 0: every benchmark was collected and passed (no tests collected would be 5).
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
